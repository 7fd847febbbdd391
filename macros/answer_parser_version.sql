{# Version of the answer normaliser in int_answer_texts_normalised. Bump it
   whenever a normalisation rule changes, so every score records the rules
   that produced it. #}
{% macro answer_parser_version() -%}
    'answer-parser-1'
{%- endmacro %}
