{#- Correction events (DESIGN: "a correction is a new event with a reason"): the one test every
    family's grid applies to leave out an excluded item (int_corrections_items_excluded). -#}
{% macro is_excluded_item(family, run_id, item_id, dataset_sha256) -%}
    exists (
        select 1 as found
        from {{ ref('int_corrections_items_excluded') }} as excluded
        where excluded.family = '{{ family }}'
            and excluded.item_id = {{ item_id }}
            and excluded.dataset_sha256 = {{ dataset_sha256 }}
            and (excluded.scope_run_id is null or excluded.scope_run_id = {{ run_id }})
    )
{%- endmacro %}
