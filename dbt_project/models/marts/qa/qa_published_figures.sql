-- One row per (run_id, lane, grader_id, metric) that an imported QA results file publishes about
-- itself in its header and the QA marts recompute: the file's own figure (verbatim, a 0-1
-- fraction) beside qa_leaderboard's for the same run, lane and the file's grader regime.
-- Header figures read, by format:
--   simple-evals: score and metrics.is_correct -> strict_accuracy / is_correct (simple-evals'
--     score is the mean of is_correct), metrics.is_incorrect, metrics.is_not_attempted,
--     metrics.accuracy_given_attempted, metrics.f1;
--   inspect (header.metrics, the log's first scorer): accuracy -> strict_accuracy (inspect's
--     accuracy() over the scored samples), and inspect_evals' simpleqa_metric: correct,
--     incorrect, not_attempted, correct_given_attempted -> accuracy_given_attempted, f_score -> f1.
-- nimble, csv and jsonl files publish no header figures (no rows). difference = recomputed -
-- published; matches_4dp = equal to 4 decimals (false when we recompute nothing).
with

files as (

    select * from {{ ref('stg_events__imported_file_registered') }}
    where kind = 'qa_results'

),

board as (

    select * from {{ ref('qa_leaderboard') }}

),

header_figures as (

    select
        figures.source_format,
        figures.header_path,
        figures.metric
    from (
        values
        ('simple-evals', '$.score', 'strict_accuracy'),
        ('simple-evals', '$.metrics.is_correct', 'is_correct'),
        ('simple-evals', '$.metrics.is_incorrect', 'is_incorrect'),
        ('simple-evals', '$.metrics.is_not_attempted', 'is_not_attempted'),
        ('simple-evals', '$.metrics.accuracy_given_attempted', 'accuracy_given_attempted'),
        ('simple-evals', '$.metrics.f1', 'f1'),
        ('inspect', '$.metrics.accuracy', 'strict_accuracy'),
        ('inspect', '$.metrics.correct', 'is_correct'),
        ('inspect', '$.metrics.incorrect', 'is_incorrect'),
        ('inspect', '$.metrics.not_attempted', 'is_not_attempted'),
        ('inspect', '$.metrics.correct_given_attempted', 'accuracy_given_attempted'),
        ('inspect', '$.metrics.f_score', 'f1')
    ) as figures (source_format, header_path, metric)

),

published as (

    select
        files.run_id,
        files.lane,
        files.judge_id as grader_id,
        files.source_format,
        header_figures.metric,
        header_figures.header_path as published_as,
        try_cast(json_extract_string(files.header, header_figures.header_path) as double)
            as published_value,
        files.file_event_id
    from files
    inner join header_figures on files.source_format = header_figures.source_format
    where json_extract_string(files.header, header_figures.header_path) is not null

),

final as (

    select
        published.run_id,
        published.lane,
        published.grader_id,
        published.source_format,
        published.metric,
        published.published_as,
        published.published_value,
        case published.metric
            when 'strict_accuracy' then board.strict_accuracy
            when 'is_correct' then board.is_correct
            when 'is_incorrect' then board.is_incorrect
            when 'is_not_attempted' then board.is_not_attempted
            when 'accuracy_given_attempted' then board.accuracy_given_attempted
            when 'f1' then board.f1
        end as recomputed_value,
        recomputed_value - published.published_value as difference,
        coalesce(round(abs(recomputed_value - published.published_value), 4) = 0, false)
            as matches_4dp,
        board.n_questions,
        published.file_event_id
    from published
    left join board
        on published.run_id = board.run_id
            and published.lane = board.lane
            and published.grader_id = board.grader_id

)

select * from final
