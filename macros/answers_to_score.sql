{#- int_answers_scored's change detection (docs/architecture.md#the-incremental-pattern): which raw
    answers (rows of stg_raw__responses) an incremental build scores again, as a condition on them
    ('' for every answer).
    An answer's score depends on its answer, its question, its judgment and the scoring code, so:
    answers of loads above the stored mark, answers of questions reloaded since, answers whose newest
    judgment is not the one they carry, and every answer when the scoring code changed (FINGERPRINT).
    On Spark the same reasons pick whole models, the table's partitions. The condition may read the
    model's CTE `judgments` (newest_individual_judgments). -#}
{% macro answers_to_score(fingerprint) -%}
    {%- set reloaded_questions -%}
        select question_id from {{ ref('int_questions_positioned') }}
        where load_id > (select coalesce(max(question_load_id), 0) from {{ this }})
    {%- endset -%}
    {%- set rejudged -%}
        from judgments
        inner join {{ ref('stg_raw__responses') }} as judged on judged.response_id = judgments.response_id
        left join {{ this }} as scored on scored.response_key = judged.response_key
        where scored.judgment_id is distinct from judgments.judgment_id
    {%- endset -%}
    {%- if target.type == 'spark' -%}
        {{- return(answers_to_score_by_model(fingerprint, reloaded_questions, rejudged)) -}}
    {%- endif -%}
    {#- which reasons hold, asked before the query: the answers of new loads alone are then a bare filter on
        load_id, which skips the stored row groups (OR-ed with the other reasons, DuckDB read all 17.8 M raw
        answers at 100x the paper's cases: 1.8 s of a build that adds 44,000) -#}
    {%- if execute -%}
        {%- set found = run_query("with judgments as (" ~ newest_individual_judgments(ref('int_judgments')) ~ ") select"
            ~ " exists (select 1 from " ~ this ~ " where scoring_fingerprint is distinct from '" ~ fingerprint ~ "'),"
            ~ " exists (" ~ reloaded_questions ~ "), exists (select 1 " ~ rejudged ~ ")").rows[0] -%}
    {%- else -%}
        {%- set found = [true, true, true] -%}
    {%- endif -%}
    {%- if found[0] -%}
        {{- return('') -}}              {#- every answer: no condition #}
    {%- endif -%}
    {%- set reasons = ["load_id > (select coalesce(max(load_id), 0) from " ~ this ~ ")"] -%}
    {%- if found[1] -%}
        {%- do reasons.append("question_id in (" ~ reloaded_questions ~ ")") -%}
    {%- endif -%}
    {%- if found[2] -%}
        {%- do reasons.append("response_key in (select judged.response_key " ~ rejudged ~ ")") -%}
    {%- endif -%}
    {{- return(reasons | join('\n        or ')) -}}
{%- endmacro %}

{#- On Spark: the models with answers of a new load, an answer to a reloaded question (a question
    loaded with no answer yet touches none) or a changed judgment; every model when the code changed. -#}
{% macro answers_to_score_by_model(fingerprint, reloaded_questions, rejudged) -%}
    {%- set models -%}
        select responses.model
        from {{ ref('stg_raw__responses') }} as responses
        left join (
            select model, max(load_id) as load_id, bool_or(scoring_fingerprint <> '{{ fingerprint }}') as recoded
            from {{ this }}
            group by model
        ) as stored on stored.model = responses.model
        group by responses.model
        having max(responses.load_id) > coalesce(max(stored.load_id), -1) or coalesce(bool_or(stored.recoded), false)
        union
        select distinct model from {{ ref('stg_raw__responses') }}
        where question_id in ({{ reloaded_questions }})
        union
        select judged.model
        {{ rejudged }}
    {%- endset -%}
    {{- return("model in (" ~ models ~ ")") -}}
{%- endmacro %}

{#- The newest individual judgment of each answer in JUDGMENTS (int_judgments): the scores a free
    response carries. Scoring logic, so int_answers_scored's fingerprint includes its text. -#}
{% macro newest_individual_judgments(judgments) -%}
    select response_id, judgment_id, judge_model, accuracy_score, htr_score,
        row_number() over (partition by response_id order by judged_at desc, judge_model) as judge_rank
    from {{ judgments }}
    where kind = 'individual'
    qualify judge_rank = 1
{%- endmacro %}
