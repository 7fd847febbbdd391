{# The one masking rule of the benchmark (paper eq. 1): an event is visible
   at a cutoff when its time is at or before it. Every masked relation uses
   this macro, so the boundary is defined once. #}
{% macro is_visible_at_cutoff(event_hours, cutoff_hours) -%}
    ({{ event_hours }} <= {{ cutoff_hours }})
{%- endmacro %}
