{%- set weights = extraction_weights() %}
{%- set seed_weights = seed_extraction_weights() %}
{%- set components = extraction_weight_components() %}
{#- the active weights are the seed composite's when they match it on its five terms and give
    nothing to the rest -#}
{%- set ns = namespace(is_seed=true) %}
{%- for key, weight in weights.items() %}
{%- if weight != seed_weights.get(key, 0) %}{% set ns.is_seed = false %}{% endif %}
{%- endfor %}
{%- set latency_scale_s = number_var('latency_scale_s', 0, min_inclusive=false) %}
{%- set throughput_full_bytes = number_var('throughput_full_bytes', 0, min_inclusive=false) %}

with

pages as (

    select * from {{ ref('int_extraction_pages_scored') }}

),

runs as (

    select * from {{ ref('int_runs_started') }}

),

bootstrapped as (

    select * from {{ ref('int_extraction_systems_bootstrapped') }}

),

per_system as (

    select
        run_id,
        system,
        any_value(run_source) as run_source,
        any_value(dataset_sha256) as dataset_sha256,
        any_value(run_system_version) as system_version,
        count(*) as n_items,
        count(*) filter (where outcome = 'completed') as n_completed,
        count(*) filter (where outcome = 'failed') as n_failed,
        {{ stable_avg('page_precision', where='tp + fp > 0') }} as shingle_precision,
        {{ stable_avg('page_recall', where='tp + fn > 0') }} as shingle_recall,
        {{ stable_avg('cast(exact_match as double)') }} as shingle_accuracy,
        -- the live-URL benchmark averages completeness over raw-successful fetches only;
        -- everything else is averaged over the whole grid (failed and missing pages count 0)
        {{ stable_avg('completeness', where='raw_success') }} as completeness,
        {{ stable_avg('cast(raw_success as double)') }} as raw_success_rate,
        {{ stable_avg('cast(useful_success as double)') }} as useful_success_rate,
        {{ stable_avg('token_f1') }} as token_f1,
        quantile_cont(latency_ms, 0.95) filter (
            where outcome = 'completed' and run_source = 'engine'
        ) / 1000.0 as latency_p95_s,
        {{ stable_avg('coalesce(output_bytes, 0)') }} as avg_output_bytes,
        coalesce(
            list_sort(list(extraction_event_id) filter (where extraction_event_id is not null)),
            cast([] as varchar[])
        ) as event_ids
    from pages
    group by run_id, system

),

scored as (

    select
        per_system.*,
        {{ harmonic_f1('per_system.shingle_precision', 'per_system.shingle_recall') }} as shingle_f1,
        case
            when per_system.latency_p95_s is not null
                then exp(-per_system.latency_p95_s / {{ latency_scale_s }})
        end as latency_score,
        -- NULL-safe clamp: DuckDB's least() ignores NULLs
        case
            when per_system.avg_output_bytes is not null
                then least(per_system.avg_output_bytes / {{ throughput_full_bytes }}, 1.0)
        end as throughput_score
    from per_system

),

weighted as (

    select
        scored.*,
        -- a term that cannot be measured (no raw success -> no completeness; imports carry no
        -- latency -> no latency score) contributes 0; the weights are not renormalised
        {{ extraction_composite(weights, 'scored') }} as composite,
        {{ extraction_composite(seed_weights, 'scored') }} as seed_composite
    from scored

),

-- Systems whose composites agree to the 3 decimals shown are tied; the note says on which
-- components they still differ (or that they agree on all of them), in one line.
tie_groups as (

    select
        weighted.*,
        round(weighted.composite, 3) as composite_shown,
        count(*) over (
            partition by weighted.dataset_sha256, round(weighted.composite, 3)
        ) as n_tied
    from weighted

),

tie_components as (

    {%- for key, column in components.items() %}
    select
        dataset_sha256,
        composite_shown,
        '{{ key }}' as component,
        min(round({{ column }}, 3)) as low,
        max(round({{ column }}, 3)) as high
    from tie_groups
    where n_tied > 1
    group by dataset_sha256, composite_shown
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}

),

tie_reasons as (

    select
        dataset_sha256,
        composite_shown,
        -- the three components that differ most are enough to say why
        case
            when count(*) filter (where low is distinct from high) = 0
                then 'equal on every component'
            else 'they differ on ' || array_to_string(list_slice(
                    list(
                        component || ' ' || printf('%.3f', low) || '–' || printf('%.3f', high)
                        order by high - low desc, component
                    ) filter (where low is distinct from high),
                    1, 3
                ), ', ')
        end as differences
    from tie_components
    group by dataset_sha256, composite_shown

),

ties as (

    select
        tie_groups.*,
        case
            when tie_groups.n_tied > 1 then
                'tied with ' || (tie_groups.n_tied - 1) || ' other(s) at '
                || printf('%.3f', tie_groups.composite_shown) || ': '
                || tie_reasons.differences
        end as tie_note
    from tie_groups
    left join tie_reasons
        on tie_groups.dataset_sha256 = tie_reasons.dataset_sha256
            and tie_groups.composite_shown = tie_reasons.composite_shown

),

final as (

    select
        weighted.run_id,
        weighted.run_source,
        runs.dataset_name,
        weighted.dataset_sha256,
        weighted.system,
        weighted.system_version,
        weighted.n_items,
        weighted.n_completed,
        weighted.n_failed,
        weighted.shingle_precision,
        weighted.shingle_recall,
        weighted.shingle_f1,
        weighted.shingle_accuracy,
        bootstrapped.shingle_precision_std,
        bootstrapped.shingle_recall_std,
        bootstrapped.shingle_f1_std,
        bootstrapped.shingle_accuracy_std,
        bootstrapped.bootstrap_seed,
        bootstrapped.bootstrap_samples,
        weighted.completeness,
        weighted.raw_success_rate,
        weighted.useful_success_rate,
        weighted.token_f1,
        weighted.latency_p95_s,
        weighted.avg_output_bytes,
        weighted.latency_score,
        weighted.throughput_score,
        weighted.composite,
        bootstrapped.composite_ci_low,
        bootstrapped.composite_ci_high,
        weighted.seed_composite,
        {{ 'true' if ns.is_seed else 'false' }} as composite_is_seed,
        weighted.tie_note,
        {%- for key, weight in weights.items() %}
        cast({{ weight }} as double) as w_{{ key }},
        {%- endfor %}
        cast({{ scoring_var('useful_success_threshold') }} as double) as useful_success_threshold,
        rank() over (
            partition by weighted.dataset_sha256 order by weighted.composite desc
        ) as rank_composite,
        rank() over (
            partition by weighted.dataset_sha256 order by weighted.seed_composite desc
        ) as rank_seed_composite,
        rank() over (
            partition by weighted.dataset_sha256 order by weighted.shingle_f1 desc nulls last
        ) as rank_shingle_f1,
        weighted.event_ids
    from ties as weighted
    left join runs on weighted.run_id = runs.run_id
    left join bootstrapped
        on weighted.run_id = bootstrapped.run_id and weighted.system = bootstrapped.system

)

select * from final
