-- One row per (run, URL, engine) of the live-URL benchmark, with every score, the flags that
-- decided it, the hygiene verdict of its URL and the event ids it came from.
with

flagged as (

    select * from {{ ref('int_live_extraction_pages_flagged') }}

),

scored as (

    select * from {{ ref('int_live_extraction_pages_scored') }}

),

hygiene as (

    select * from {{ ref('int_live_extraction_url_hygiene') }}

)

select
    flagged.run_id,
    flagged.item_id,
    flagged.url,
    flagged.vertical,
    flagged.system,
    flagged.system_version,
    flagged.engine_kind,
    flagged.provider,
    flagged.outcome,
    flagged.target_status_code,
    flagged.final_url,
    flagged.render_requested,
    flagged.render_used,
    flagged.latency_ms,
    flagged.output_bytes,
    flagged.requests_sent,
    flagged.error_class,
    flagged.error_message,
    flagged.raw_success,
    flagged.non_content,
    flagged.non_content_rule_ids,
    flagged.non_content_rules_version,
    scored.anchors_total,
    scored.anchors_found,
    scored.completeness,
    scored.passage_tokens,
    scored.token_recall,
    scored.window_precision,
    scored.token_f1,
    scored.useful_success,
    scored.useful_success_threshold,
    'consensus:' || scored.consensus_rule_version as ground_truth,
    hygiene.excluded,
    hygiene.exclusion_reason,
    flagged.normalizer_version,
    flagged.url_event_id,
    flagged.extraction_event_id,
    flagged.source_event_ids
from flagged
inner join scored
    on
        flagged.run_id = scored.run_id
        and flagged.item_id = scored.item_id
        and flagged.system = scored.system
inner join hygiene
    on flagged.run_id = hygiene.run_id and flagged.item_id = hygiene.item_id
