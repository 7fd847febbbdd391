-- One row per cohort: the distribution of RelPos over its questions (paper
-- Table D.1), with the count of questions where RelPos is undefined, and how many cutoffs
-- matched their own cutoff event.
with questions as (
    select * from {{ ref('int_questions_positioned') }}
),

final as (
    select
        cohort,
        cast(count(relpos) as integer) as n,
        cast(count(*) - count(relpos) as integer) as n_undefined,
        avg(relpos) as mean,
        median(relpos) as median,
        stddev_samp(relpos) as sd,
        min(relpos) as min,
        max(relpos) as max,
        cast(count(*) filter (where relpos_method = 'cutoff_event') as integer) as n_cutoff_event_matched,
        cast(count(*) filter (where relpos_method = 'last_event_at_cutoff') as integer) as n_cutoff_event_fallback
    from questions
    group by cohort
)

select * from final
