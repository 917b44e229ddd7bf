{#- The warehouse on a DuckLake (profiles.yml target `lake`, warehouse/lake.py) runs the same
    models as the local DuckDB file. DuckLake has no CHECK constraints, which the marts' contracts
    declare (a value set, a range: dbt_project.yml `marts`), so on a lake:
      * the table is created with every constraint but the CHECKs (this dispatch override of
        dbt's get_table_columns_and_constraints; locally it is dbt's own, unchanged);
      * each CHECK is asserted right after the model is written (lake_contract_checks, a post-hook
        of every mart), failing the model as the CHECK fails it locally. A failing row raises
        DuckDB's error() naming the model, column and rule. A CHECK passes on TRUE or NULL, so
        only rows where the rule is FALSE fail, as in the table's constraint.
    One definition of each rule (the mart's yml) serves both targets; no model is forked. -#}
{% macro duckdb__get_table_columns_and_constraints() -%}
    {%- if not adapter.is_ducklake(this) -%}
        {{ return(table_columns_and_constraints()) }}
    {%- endif -%}
    {%- set columns = {} -%}
    {%- for name, column in model['columns'].items() -%}
        {%- set kept = column.get('constraints', []) | rejectattr('type', 'equalto', 'check') | list -%}
        {%- set copy = column.copy() -%}
        {%- do copy.update({'constraints': kept}) -%}
        {%- do columns.update({name: copy}) -%}
    {%- endfor -%}
    {%- set raw_column_constraints = adapter.render_raw_columns_constraints(raw_columns=columns) -%}
    {%- set model_constraints = model.get('constraints', []) | rejectattr('type', 'equalto', 'check') | list -%}
    {%- set raw_model_constraints = adapter.render_raw_model_constraints(raw_constraints=model_constraints) -%}
    (
    {% for c in raw_column_constraints -%}
        {{ c }}{{ "," if not loop.last or raw_model_constraints }}
    {% endfor %}
    {% for c in raw_model_constraints -%}
        {{ c }}{{ "," if not loop.last }}
    {% endfor -%}
    )
{%- endmacro %}

{% macro lake_contract_checks() -%}
    {%- if not execute or not adapter.is_ducklake(this) -%}
        {{ return('') }}
    {%- endif -%}
    {%- set rules = [] -%}
    {%- for name, column in model['columns'].items() -%}
        {%- for constraint in column.get('constraints', []) if constraint.type == 'check' -%}
            {%- do rules.append((name, constraint.expression)) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- for constraint in model.get('constraints', []) if constraint.type == 'check' -%}
        {%- do rules.append(('(model)', constraint.expression)) -%}
    {%- endfor -%}
    {%- if not rules -%}
        {{ return('') }}
    {%- endif -%}
    {%- set failures = [] -%}
    {%- for column, rule in rules -%}
        {%- set message = 'contract check failed on the lake: ' ~ model.name ~ '.' ~ column ~ ': ' ~ rule -%}
        {%- do failures.append(
            "select error('" ~ message | replace("'", "''") ~ "') from (select 1 from " ~ this
            ~ " where not (" ~ rule ~ ") limit 1)") -%}
    {%- endfor -%}
    {{ return(failures | join('\nunion all\n')) }}
{%- endmacro %}
