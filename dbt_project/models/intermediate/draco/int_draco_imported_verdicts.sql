-- One row per (run_id, lane, judge_id, item_id, criterion_id, run_index) of every DRACO grading
-- import: the imported verdict with the registered criterion it was joined to at import (the
-- importer verified requirement text and weight). The weight is the REGISTERED one: this chain
-- recomputes what the file published, under the file's rules; our rescoring vars (weight
-- overrides, penalty floor) apply to our own regimes only.
with

verdicts as (

    select * from {{ ref('stg_events__imported_verdict') }}

),

criteria as (

    select * from {{ ref('stg_events__rubric_criterion_registered') }}

),

final as (

    select
        verdicts.run_id,
        verdicts.lane,
        verdicts.judge_id,
        verdicts.item_id,
        verdicts.criterion_id,
        verdicts.run_index,
        criteria.axis,
        criteria.criterion_position,
        cast(criteria.registered_weight as double) as weight,
        case when criteria.registered_weight < 0 then 'negative' else 'positive' end as polarity,
        coalesce(superseded.replacement, verdicts.verdict) as verdict,
        -- a verdict_superseded correction replaces the file's verdict (met_rate 1 / 0)
        case superseded.replacement
            when 'MET' then 1.0
            when 'UNMET' then 0.0
            else verdicts.met_rate
        end as met_rate,
        superseded.correction_event_id as superseded_by_event_id,
        verdicts.samples,
        verdicts.justification,
        verdicts.source_event_id as file_event_id,
        verdicts.imported_verdict_event_id,
        criteria.criterion_event_id
    from verdicts
    inner join criteria
        on verdicts.run_id = criteria.run_id
            and verdicts.item_id = criteria.item_id
            and verdicts.criterion_id = criteria.criterion_id
    left join {{ ref('int_corrections_verdicts_superseded') }} as superseded
        on verdicts.imported_verdict_event_id = superseded.superseded_event_id
            and superseded.superseded_event_type = 'imported_verdict'

)

select * from final
