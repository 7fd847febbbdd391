{#- HindsightBench prompt pieces, byte for byte as the release sent them (hindsightbench.md §3,
    HINDSIGHTBENCH_SPEC.md "Panel and prompts"). `hb_split_lines(text)` splits as Python's
    str.splitlines does on these texts (no carriage returns: a trailing newline ends the last line,
    it does not start an empty one); the rebuilt texts join lines with a newline and so have none. -#}
{% macro hb_split_lines(text) -%}
    {%- set without_last_newline -%}
        case when right({{ text }}, 1) = chr(10) then substr({{ text }}, 1, length({{ text }}) - 1) else {{ text }} end
    {%- endset -%}
    {{ split_text(without_last_newline, 'chr(10)') }}
{%- endmacro %}

{% macro hb_date_line_pattern() -%}
'^(\s*)Decision time point: \d{4}-\d{2}-\d{2} - only information available on or before this date is admissible as evidence\.\s*$'
{%- endmacro %}

{#- the target-panel summary and metadata lines D, M and W drop -#}
{% macro hb_dropped_line_pattern() -%}
'^\s*(Date range|Total sessions|Positive days|Negative days|Pos/Neg ratio|decision_date_used|model_ready_panel_rows)\s*:'
{%- endmacro %}

{#- a vintage snapshot line: indent, series, vintage month, vintage value -#}
{% macro hb_snapshot_pattern() -%}
'^(\s*)- ([A-Z0-9]+): vintage_date=(\d{4}-\d{2})-\d{2}, vintage_value=([^,]+), revised_value=.+$'
{%- endmacro %}

{% macro hb_rec_system() -%}
'You are an expert on US macroeconomic data history. Respond with a single JSON object and nothing else.'
{%- endmacro %}

{% macro hb_rec_user(snapshot) -%}
'Below is a snapshot of US macroeconomic indicator values. Each line shows a
FRED/ALFRED series ID, the observation lag relative to an undisclosed reference
date, and the value as it was reported at that reference date.

' || {{ snapshot }} || '

Based only on these values, what is the most likely calendar year and month of
the undisclosed reference date? Respond with JSON: {"estimated_date": "YYYY-MM"}'
{%- endmacro %}

{% macro hb_lap_system() -%}
'You answer with exactly one word: up, down, or unknown.'
{%- endmacro %}

{% macro hb_lap_user(t, t_end) -%}
'Between ' || {{ t }} || ' and ' || {{ t_end }} || ', did the S&P 500 index go up or down? Answer based only on what you recall about the U.S. stock market in that specific period. If you do not recall, answer unknown. Respond with exactly one word: up, down, or unknown.'
{%- endmacro %}
