{#- Page precision / recall of the shingle metric, with the upstream edge rules
    (scrapinghub/article-extraction-benchmark evaluate.py):
      precision: fp = fn = 0 -> 1; tp = fp = 0 -> 0; else tp / (tp + fp)
      recall:    fp = fn = 0 -> 1; tp = fn = 0 -> 0; else tp / (tp + fn)
    The arguments may be raw counts or counts divided by tp + fp + fn: the ratios are equal. -#}
{% macro shingle_page_precision(tp, fp, fn) -%}
    case
        when {{ fp }} = 0 and {{ fn }} = 0 then 1.0
        when {{ tp }} = 0 and {{ fp }} = 0 then 0.0
        else cast({{ tp }} as double) / ({{ tp }} + {{ fp }})
    end
{%- endmacro %}

{% macro shingle_page_recall(tp, fp, fn) -%}
    case
        when {{ fp }} = 0 and {{ fn }} = 0 then 1.0
        when {{ tp }} = 0 and {{ fn }} = 0 then 0.0
        else cast({{ tp }} as double) / ({{ tp }} + {{ fn }})
    end
{%- endmacro %}

{#- F1 of the two corpus means (not a mean of page F1s). Undefined means (no page with a
    predicted or a true shingle) and P + R = 0 give 0, where upstream would divide by zero. -#}
{% macro harmonic_f1(precision, recall) -%}
    case
        when {{ precision }} + {{ recall }} > 0
            then 2 * {{ precision }} * {{ recall }} / ({{ precision }} + {{ recall }})
        else 0.0
    end
{%- endmacro %}
