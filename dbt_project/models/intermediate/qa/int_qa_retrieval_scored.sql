-- One row per (run_id, lane, item_id) with a resolved chunks event: URL retrieval metrics
-- (methodology 2.4) on the normalised, de-duplicated URLs of int_qa_urls_normalized.
-- rel_r = 1 when the rank-r URL is in the gold set G; k in {5, 10}:
--   NDCG@k = sum_{r<=k} rel_r / log2(r + 1) over sum_{r<=min(k,|G|)} 1 / log2(r + 1) (the ideal
--   counts every gold URL); Recall@k = hits in top k / |G|; Hit@k = any hit in top k;
--   MRR = 1 / first hit rank, no cut-off. Empty predictions or empty G -> every metric 0.
with

units as (

    select
        run_id,
        lane,
        item_id,
        chunks_event_id
    from {{ ref('int_qa_units_resolved') }}
    where chunks_event_id is not null

),

urls as (

    select * from {{ ref('int_qa_urls_normalized') }}
    where is_kept

),

gold as (

    select
        run_id,
        item_id,
        any_value(url_normalizer_version) as url_normalizer_version,
        count(*) as n_gold,
        list(normalized_url order by position) as gold_urls
    from urls
    where url_source = 'gold'
    group by run_id, item_id

),

predicted as (

    select
        urls.chunks_event_id,
        urls.position,
        urls.normalized_url,
        units.run_id,
        units.lane,
        units.item_id
    from urls
    inner join units on urls.chunks_event_id = units.chunks_event_id
    where urls.url_source = 'predicted'

),

judged as (

    select
        predicted.*,
        coalesce(gold.n_gold, 0) as n_gold,
        case
            when predicted.normalized_url != ''
                and list_contains(gold.gold_urls, predicted.normalized_url) then 1
            else 0
        end as rel
    from predicted
    left join gold on predicted.run_id = gold.run_id and predicted.item_id = gold.item_id

),

per_unit as (

    select
        run_id,
        lane,
        item_id,
        count(*) as n_predicted,
        list_sum(list(rel / log2(position + 1) order by position) filter (where position <= 5))
            as dcg_5,
        list_sum(list(rel / log2(position + 1) order by position) filter (where position <= 10))
            as dcg_10,
        coalesce(sum(rel) filter (where position <= 5), 0) as hits_5,
        coalesce(sum(rel) filter (where position <= 10), 0) as hits_10,
        min(position) filter (where rel = 1) as first_hit
    from judged
    group by run_id, lane, item_id

),

ideal as (

    -- ideal DCG@k for |G| = 1..10 gold URLs (beyond 10 the @10 ideal no longer grows)
    select
        ns.n as n_gold,
        list_sum(
            list(1 / log2(rs.r + 1) order by rs.r) filter (where rs.r <= least(ns.n, 5))
        ) as idcg_5,
        list_sum(
            list(1 / log2(rs.r + 1) order by rs.r) filter (where rs.r <= least(ns.n, 10))
        ) as idcg_10
    from range(1, 11) as ns (n)
    cross join range(1, 11) as rs (r)
    group by ns.n

),

final as (

    select
        units.run_id,
        units.lane,
        units.item_id,
        units.chunks_event_id,
        coalesce(gold.url_normalizer_version, '{{ scoring_var("url_normalizer_version") }}')
            as url_normalizer_version,
        coalesce(gold.n_gold, 0) as n_gold,
        coalesce(per_unit.n_predicted, 0) as n_predicted,
        case
            when coalesce(gold.n_gold, 0) > 0 and per_unit.n_predicted > 0
                then coalesce(per_unit.dcg_5, 0) / ideal.idcg_5
            else 0.0
        end as ndcg_5,
        case
            when coalesce(gold.n_gold, 0) > 0 and per_unit.n_predicted > 0
                then coalesce(per_unit.dcg_10, 0) / ideal.idcg_10
            else 0.0
        end as ndcg_10,
        case
            when coalesce(gold.n_gold, 0) > 0 and per_unit.n_predicted > 0
                then cast(per_unit.hits_5 as double) / gold.n_gold
            else 0.0
        end as recall_5,
        case
            when coalesce(gold.n_gold, 0) > 0 and per_unit.n_predicted > 0
                then cast(per_unit.hits_10 as double) / gold.n_gold
            else 0.0
        end as recall_10,
        coalesce(1.0 / per_unit.first_hit, 0.0) as mrr,
        coalesce(per_unit.hits_5 > 0, false) as hit_5,
        coalesce(per_unit.hits_10 > 0, false) as hit_10
    from units
    left join per_unit
        on units.run_id = per_unit.run_id
            and units.lane = per_unit.lane
            and units.item_id = per_unit.item_id
    left join gold on units.run_id = gold.run_id and units.item_id = gold.item_id
    left join ideal on least(coalesce(gold.n_gold, 0), 10) = ideal.n_gold

)

select * from final
