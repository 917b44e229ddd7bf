{#- Non-content responses: error pages and anti-bot screens served as a successful fetch.
    Rules are versioned; `scoring_var('non_content_rules_version')` picks the set, and the version is
    recorded in marts.dim_scoring_vars. Never edit a released version: add a new one.

    Each rule: id, an RE2 pattern matched against lower(normalised output), and max_chars: the
    rule only fires when the normalised output is shorter than that (a real article that
    mentions "page not found" is still content). -#}
{% macro non_content_rule_sets() -%}
    {%- set v1 = [
        {'id': 'access_denied', 'max_chars': 2000,
         'pattern': '\\baccess (is )?denied\\b'},
        {'id': 'enable_javascript', 'max_chars': 2000,
         'pattern': '\\b(enable|turn on|activate) javascript\\b|\\bjavascript (is )?(required|disabled|must be enabled)\\b'},
        {'id': 'captcha', 'max_chars': 2000,
         'pattern': '\\bcaptcha\\b|\\bare you (a )?(human|robot)\\b|\\bverify (that )?you are (a )?human\\b'},
        {'id': 'forbidden_403', 'max_chars': 2000,
         'pattern': '\\b403\\W{0,3}forbidden\\b|\\bforbidden\\W{0,3}403\\b'},
        {'id': 'not_found_404', 'max_chars': 2000,
         'pattern': '\\bpage (was )?not found\\b|\\b404\\W{0,3}(page )?not found\\b'},
        {'id': 'browser_check', 'max_chars': 2000,
         'pattern': '\\bchecking (if the site connection is secure|your browser)\\b'},
    ] -%}
    {#- "2" (live-URL benchmark): every rule of "1", plus cookie walls and origin error pages -#}
    {%- set v2 = v1 + [
        {'id': 'cookie_wall', 'max_chars': 2000,
         'pattern': '\\b(accept|allow) all cookies\\b|\\bwe value your privacy\\b|\\bcookie (consent|preferences|settings)\\b'},
        {'id': 'service_unavailable', 'max_chars': 2000,
         'pattern': '\\b50[0234]\\W{0,3}(service unavailable|bad gateway|internal server error|gateway time-?out)\\b'},
    ] -%}
    {{ return({'1': v1, '2': v2}) }}
{%- endmacro %}

{% macro non_content_rules(version=none) -%}
    {%- set version = (scoring_var('non_content_rules_version') if version is none else version) | string -%}
    {%- set rule_sets = non_content_rule_sets() -%}
    {%- if version not in rule_sets -%}
        {{ exceptions.raise_compiler_error(
            "var non_content_rules_version " ~ version ~ " is unknown; known versions: "
            ~ rule_sets.keys() | list | sort | join(', ')) }}
    {%- endif -%}
    {{ return(rule_sets[version]) }}
{%- endmacro %}

{#- Comma-separated ids of the rules that fire on `text` ('' when none does); `version` defaults
    to scoring_var('non_content_rules_version') (the live-URL benchmark passes its own var). -#}
{% macro non_content_rule_ids(text, version=none) -%}
    concat_ws(
        ','
        {%- for rule in non_content_rules(version) %},
        case
            when length({{ text }}) < {{ rule.max_chars }}
                and regexp_matches(lower({{ text }}), '{{ rule.pattern | replace("'", "''") }}')
                then '{{ rule.id }}'
        end
        {%- endfor %}
    )
{%- endmacro %}
