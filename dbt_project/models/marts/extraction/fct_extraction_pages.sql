with

pages as (

    select * from {{ ref('int_extraction_pages_scored') }}

),

final as (

    select
        run_id,
        dataset_sha256,
        system,
        system_version,
        item_id,
        position,
        url,
        outcome,
        attempt,
        output_text,
        output_bytes,
        latency_ms,
        error_class,
        error_message,
        truth_tokens,
        output_tokens,
        tp,
        fp,
        fn,
        page_precision,
        page_recall,
        page_f1,
        exact_match,
        anchors_total,
        anchors_found,
        completeness,
        token_recall,
        window_precision,
        token_f1,
        raw_success,
        non_content,
        useful_success,
        item_event_id,
        extraction_event_id,
        extraction_content_sha256
    from pages

)

select * from final
