{# Table G.1 of the human validation in SQL: the rows of ingest/stats/validation_agreement.py with
   draws = `warehouse` (the counter-based draws, one stream per row of the table and cohort), for
   engines without dbt Python models (Spark). tests/python/test_spark_engine.py compares the two.

   Per design, cohort (each, and `all`), item (and judge model): the share of `yes` among the
   assessments (sample_agreement), its design-weighted (Hajek) share (ipw_agreement), and over the
   questions both raters of a half judged (a judge item: the judge's and the annotator's score of one
   answer) the share judged alike and Cohen's kappa. Replicate r weighs each case by how often it drew
   it; an interval is the 2.5th-97.5th percentiles of the replicates whose statistic is defined, given
   at least half of them are. #}
{% macro validation_agreement_sql() %}
{%- set statistics = ['sample_agreement', 'ipw_agreement', 'inter_annotator_agreement', 'cohens_kappa'] %}
{%- set row_key = ['row_id'] %}
{%- set replicates = var('bootstrap_replicates') | int %}
{%- if var('validation_bootstrap_draws') not in ['auto', 'warehouse'] %}
    {{ exceptions.raise_compiler_error("validation_bootstrap_draws '" ~ var('validation_bootstrap_draws')
        ~ "' is drawn by numpy, which SQL cannot draw: use `warehouse` (or `auto`) on " ~ target.type) }}
{%- endif %}
with rows_assessed as (
    select * from {{ ref('int_validation_assessments') }}
),

pairs as (
    -- an item's two raters of one question (the categories of rater 1 and 2), or a judge item's
    -- two scores of one answer
    select {{ row_key | join(', ') }}, cohort, case_id, first_category, second_category
    from (
        select
            {{ row_key | join(', ') }}, cohort, case_id, question_id,
            min(case when rater = 1 then category end) as first_category,
            min(case when rater = 2 then category end) as second_category
        from rows_assessed
        where judge_model is null
        group by {{ row_key | join(', ') }}, cohort, case_id, question_id
    ) as rated
    where first_category is not null and second_category is not null
    union all
    select {{ row_key | join(', ') }}, cohort, case_id, category, other_category
    from rows_assessed
    where judge_model is not null
),

strata as (
    select * from {{ ref('int_validation_bootstrap_draws') }}
),

weights as (
    -- replicate r's multiplicity of each case (an undrawn one has no row); replicate -1 is the
    -- sample itself (every case once): the estimate, from the same sums
    select {{ row_key | join(', ') }}, cohort, case_id, replicate, multiplicity
    from strata
    where replicate >= 0
    union all
    select distinct {{ row_key | join(', ') }}, cohort, case_id, -1, 1 from strata
),

assessment_sums as (
    select
        {% for column in row_key %}weights.{{ column }}, {% endfor %}weights.replicate,
        sum(weights.multiplicity * rows_assessed.hit) as hits,
        cast(sum(weights.multiplicity) as double) as assessed,
        sum(weights.multiplicity * rows_assessed.hit * rows_assessed.weight) as weighted_hits,
        sum(weights.multiplicity * rows_assessed.weight) as weighted
    from rows_assessed
    inner join weights
        on weights.row_id = rows_assessed.row_id and weights.cohort = rows_assessed.cohort
        and weights.case_id = rows_assessed.case_id
    group by {% for column in row_key %}weights.{{ column }}, {% endfor %}weights.replicate
),

pair_categories as (
    -- per replicate and category: how often each rater gave it (weighted by the draws)
    select
        {% for column in row_key %}weights.{{ column }}, {% endfor %}weights.replicate, categories.category,
        sum(weights.multiplicity * case when pairs.first_category = categories.category then 1 else 0 end) as first_count,
        sum(weights.multiplicity * case when pairs.second_category = categories.category then 1 else 0 end) as second_count
    from pairs
    inner join weights
        on weights.row_id = pairs.row_id and weights.cohort = pairs.cohort
        and weights.case_id = pairs.case_id
    inner join (
        select distinct {{ row_key | join(', ') }}, first_category as category from pairs
        union
        select distinct {{ row_key | join(', ') }}, second_category from pairs
    ) as categories
        on categories.row_id = pairs.row_id
    group by {% for column in row_key %}weights.{{ column }}, {% endfor %}weights.replicate, categories.category
),

pair_sums as (
    select
        {% for column in row_key %}weights.{{ column }}, {% endfor %}weights.replicate,
        cast(sum(weights.multiplicity) as double) as paired,
        cast(sum(weights.multiplicity * case when pairs.first_category = pairs.second_category then 1 else 0 end) as double) as alike
    from pairs
    inner join weights
        on weights.row_id = pairs.row_id and weights.cohort = pairs.cohort
        and weights.case_id = pairs.case_id
    group by {% for column in row_key %}weights.{{ column }}, {% endfor %}weights.replicate
),

expected as (
    select
        sums.{{ row_key | join(', sums.') }}, sums.replicate,
        sum((categories.first_count / sums.paired) * (categories.second_count / sums.paired)) as expected_agreement
    from pair_sums as sums
    inner join pair_categories as categories
        on categories.row_id = sums.row_id and categories.replicate = sums.replicate
    group by sums.{{ row_key | join(', sums.') }}, sums.replicate
),

replicate_values as (
    -- a statistic per row and replicate where it is defined
    select {{ row_key | join(', ') }}, replicate, 'sample_agreement' as statistic, hits / assessed as value
    from assessment_sums where assessed > 0
    union all
    select {{ row_key | join(', ') }}, replicate, 'ipw_agreement', weighted_hits / weighted
    from assessment_sums where weighted > 0
    union all
    select {{ row_key | join(', ') }}, replicate, 'inter_annotator_agreement', alike / paired
    from pair_sums where paired > 0
    union all
    select sums.{{ row_key | join(', sums.') }}, sums.replicate, 'cohens_kappa',
        (sums.alike / sums.paired - expected.expected_agreement) / (1 - expected.expected_agreement)
    from pair_sums as sums
    inner join expected
        on expected.row_id = sums.row_id and expected.replicate = sums.replicate
    where sums.paired > 0 and expected.expected_agreement < 1
),

table_rows as (
    -- every row x statistic, with its counts
    select
        row_id,
        any_value(design_id) as design_id,
        any_value(row_cohort) as row_cohort,
        any_value(item) as item,
        any_value(judge_model) as judge_model,
        statistics.statistic,
        {{ hash64(['row_id', 'statistics.statistic']) }} as cell_id,
        count(distinct question_id) as n_questions,
        count(distinct cohort || '/' || case_id) as n_cases,
        count(*) as n_assessments
    from rows_assessed
    cross join (
        {%- for statistic in statistics %}
        select '{{ statistic }}' as statistic{{ ' union all' if not loop.last }}
        {%- endfor %}
    ) as statistics
    group by {{ row_key | join(', ') }}, statistics.statistic
),

replicates as (
    select table_rows.cell_id, replicate_values.value
    from replicate_values
    inner join table_rows
        on table_rows.row_id = replicate_values.row_id and table_rows.statistic = replicate_values.statistic
    where replicate_values.replicate >= 0
),

finite as (
    select cell_id, count(*) as n_finite_replicates from replicates group by cell_id
),

levels as (
    select cell_id, cast(0.025 as double) as level_low, cast(0.975 as double) as level_high
    from finite
    where n_finite_replicates >= {{ replicates }} / 2.0 and {{ replicates }} > 0
),

{{ interpolated_quantiles('replicates', 'value', 'levels', 'limits') }},

final as (
    select
        table_rows.design_id,
        table_rows.row_cohort as cohort,
        table_rows.item,
        table_rows.judge_model,
        table_rows.statistic,
        estimates.value as estimate,
        limits.quantile_low as ci_low,
        limits.quantile_high as ci_high,
        cast(table_rows.n_questions as bigint) as n_questions,
        cast(table_rows.n_cases as bigint) as n_cases,
        cast(table_rows.n_assessments as bigint) as n_assessments,
        cast(coalesce(finite.n_finite_replicates, 0) as bigint) as n_finite_replicates,
        cast({{ replicates }} as bigint) as bootstrap_replicates
    from table_rows
    left join replicate_values as estimates
        on estimates.row_id = table_rows.row_id and estimates.statistic = table_rows.statistic
        and estimates.replicate = -1
    left join limits on limits.cell_id = table_rows.cell_id
    left join finite on finite.cell_id = table_rows.cell_id
)

select * from final
{% endmacro %}

{#- The draws of the validation table: per row (design, cohort or `all`, item, judge model), cohort
    and case, how often each replicate drew the case (a row per drawn case and replicate), with the
    case's index in its cohort and the cohort's size. Its own table: the draws' mixing rounds, read
    by each statistic, made a plan too large for Spark's optimizer. -#}
{% macro validation_bootstrap_draws_sql() %}
{%- set row_key = ['row_id'] %}
with assessments as (
    select * from {{ ref('int_validation_assessments') }}
),

strata as (
    -- the cases of each row's cohorts, numbered in case order: the populations the bootstrap draws
    select
        {{ row_key | join(', ') }},
        cohort,
        case_id,
        cast(row_number() over (partition by {{ row_key | join(', ') }}, cohort order by case_id) - 1 as bigint) as case_index,
        cast(count(*) over (partition by {{ row_key | join(', ') }}, cohort) as bigint) as n_cases
    from (select distinct {{ row_key | join(', ') }}, cohort, case_id from assessments) as assessed_cases
),

populations as (
    -- a stream per row and cohort (validation_agreement.stream_key)
    select distinct
        strata.row_id, strata.cohort, strata.n_cases,
        {{ bootstrap_cohort_key("labels.design_id || '|' || labels.row_cohort || '|' || labels.item || '|' || coalesce(labels.judge_model, '') || '|' || strata.cohort") }}
            as stream_key
    from strata
    inner join (select distinct row_id, design_id, row_cohort, item, judge_model from assessments) as labels
        on labels.row_id = strata.row_id
),

{{ bootstrap_multiplicities('validation', 'populations', row_key + ['cohort']) }},

final as (
    select
        strata.{{ row_key | join(', strata.') }}, strata.cohort, strata.case_id, strata.case_index, strata.n_cases,
        draws.replicate, cast(draws.multiplicity as integer) as multiplicity
    from strata
    inner join validation_multiplicities as draws
        on draws.row_id = strata.row_id and draws.cohort = strata.cohort
        and draws.case_index = strata.case_index
)

select * from final
{% endmacro %}

{#- One row per assessment of the validation table (an annotator's yes or no on an item, an
    annotator's and a judge's scores of one answer) and row it counts in: its cohort's and `all`. -#}
{% macro validation_assessments_sql() %}
{%- set items = [('reasonable', 'reasonable'), ('reference', 'agree_reference'), ('trap', 'agree_trap')] %}
{%- set judge_items = [('judge_accuracy', 'accuracy'), ('judge_htr', 'htr')] %}
with cases as (
    select design_id, cohort, case_id, inclusion_probability from {{ ref('stg_raw__validation_cases') }}
),

assessments as (
    -- one row per assessment: hit (1 for yes, or for the judge's score matched), the design weight,
    -- and for the pairs the rater and the category judged
    {%- for item, column in items %}
    select
        '{{ item }}' as item, cast(null as string) as judge_model, annotations.design_id, annotations.cohort,
        annotations.case_id, annotations.question_id,
        cast(case when annotations.{{ column }} = 'yes' then 1 else 0 end as double) as hit,
        1 / cast(cases.inclusion_probability as double) as weight,
        annotations.rater, annotations.{{ column }} as category, cast(null as string) as other_category
    from {{ ref('stg_raw__annotations') }} as annotations
    inner join cases
        on cases.design_id = annotations.design_id and cases.cohort = annotations.cohort and cases.case_id = annotations.case_id
    where annotations.{{ column }} in ('yes', 'no')
    union all
    {%- endfor %}
    {%- for item, score in judge_items %}
    select
        '{{ item }}', checks.judge_model, checks.design_id, checks.cohort, checks.case_id, checks.question_id,
        cast(case when checks.human_{{ score }}_score = checks.judge_{{ score }}_score then 1 else 0 end as double),
        1 / cast(cases.inclusion_probability as double),
        cast(null as integer), cast(checks.human_{{ score }}_score as string), cast(checks.judge_{{ score }}_score as string)
    from {{ ref('stg_raw__judge_checks') }} as checks
    inner join cases
        on cases.design_id = checks.design_id and cases.cohort = checks.cohort and cases.case_id = checks.case_id
    where checks.human_{{ score }}_score is not null and checks.judge_{{ score }}_score is not null
    {{- '\n    union all' if not loop.last }}
    {%- endfor %}
),

rows_assessed as (
    -- every assessment counts in its cohort's row and in the row `all` of its design and item
    select *, cohort as row_cohort from assessments
    union all
    select *, 'all' as row_cohort from assessments
),

final as (
    select *, {{ hash64(['design_id', 'row_cohort', 'item', "coalesce(judge_model, '')"]) }} as row_id
    from rows_assessed
)

select * from final
{% endmacro %}
