-- The consensus anchors of every live URL, with the engines that confirmed each and the rule
-- version that derived them (published for drill-down: URL -> anchors -> confirming engines).
select
    anchors.run_id,
    anchors.item_id,
    urls.url,
    anchors.anchor_index,
    anchors.anchor,
    anchors.confirmed_by,
    anchors.confirming_groups,
    anchors.consensus_rule_version
from {{ ref('int_live_extraction_anchors') }} as anchors
inner join {{ ref('stg_events__live_url_registered') }} as urls
    on anchors.run_id = urls.run_id and anchors.item_id = urls.item_id
