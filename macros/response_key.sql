{# The integer key of a raw answer (stg_raw__responses.response_key): its load and its line in one
   number, load_id * 2^32 + line_number. A file's lines stay below 2^32, so keys order answers by load,
   then line, and int_div(response_key, response_key_lines()) is the load again. #}
{% macro response_key_lines() -%}
    4294967296
{%- endmacro %}

{# What a complete reply adds to its response_key when a cell's newest answer is chosen
   (int_answers_scored): 2^62 is above every key (load ids stay below 2^30), so any complete answer
   outranks every truncated one, and within each the newest load and line wins. #}
{% macro complete_reply_rank() -%}
    4611686018427387904
{%- endmacro %}
