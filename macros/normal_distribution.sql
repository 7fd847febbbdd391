{# The standard normal distribution in SQL, for the BCa interval (ingest/stats/intervals.py uses
   Python's statistics.NormalDist): the same quantile function, Wichura's AS241 (Applied Statistics,
   1988; the algorithm and coefficients of Python's own implementation), and the cdf through erf as
   its everywhere-convergent series erf(x) = 2/sqrt(pi) exp(-x^2) sum_n (2x^2)^n x / (2n+1)!!, 100 terms
   in Horner form (within 1e-15 of math.erf for |x| <= 6; beyond, the cdf is 0 or 1 in doubles).
   Pure arithmetic: the same on every engine. P and X are column names or parenthesised expressions. #}

{% macro normal_quantile(probability) -%}
    {%- set p = 'cast(' ~ probability ~ ' as double)' %}
    {%- set q = '(' ~ p ~ ' - 0.5)' %}
    {%- set r = '(0.180625 - ' ~ q ~ ' * ' ~ q ~ ')' %}
    {%- set tail = '(case when ' ~ q ~ ' <= 0 then ' ~ p ~ ' else 1.0 - ' ~ p ~ ' end)' %}
    {%- set s = '(sqrt(-ln(' ~ tail ~ ')) - 1.6)' %}
    {%- set t = '(sqrt(-ln(' ~ tail ~ ')) - 5.0)' %}
    (case
        when {{ p }} <= 0 or {{ p }} >= 1 then null
        when abs({{ q }}) <= 0.425
            then {{ q }} * (((((((2509.0809287301227 * {{ r }} + 33430.57558358813) * {{ r }} + 67265.7709270087) * {{ r }} + 45921.95393154987) * {{ r }} + 13731.69376550946) * {{ r }} + 1971.5909503065513) * {{ r }} + 133.14166789178438) * {{ r }} + 3.3871328727963665) / (((((((5226.495278852854 * {{ r }} + 28729.085735721943) * {{ r }} + 39307.89580009271) * {{ r }} + 21213.794301586597) * {{ r }} + 5394.196021424751) * {{ r }} + 687.1870074920579) * {{ r }} + 42.31333070160091) * {{ r }} + 1.0)
        else sign({{ q }}) * case
            when sqrt(-ln({{ tail }})) <= 5.0
                then (((((((0.0007745450142783414 * {{ s }} + 0.022723844989269184) * {{ s }} + 0.2417807251774506) * {{ s }} + 1.2704582524523684) * {{ s }} + 3.6478483247632045) * {{ s }} + 5.769497221460691) * {{ s }} + 4.630337846156546) * {{ s }} + 1.4234371107496835) / (((((((1.0507500716444169E-09 * {{ s }} + 0.0005475938084995345) * {{ s }} + 0.015198666563616457) * {{ s }} + 0.14810397642748008) * {{ s }} + 0.6897673349851) * {{ s }} + 1.6763848301838038) * {{ s }} + 2.053191626637759) * {{ s }} + 1.0)
            else (((((((2.0103343992922881E-07 * {{ t }} + 2.7115555687434876E-05) * {{ t }} + 0.0012426609473880784) * {{ t }} + 0.026532189526576124) * {{ t }} + 0.29656057182850487) * {{ t }} + 1.7848265399172913) * {{ t }} + 5.463784911164114) * {{ t }} + 6.657904643501103) / (((((((2.0442631033899397E-15 * {{ t }} + 1.421511758316446E-07) * {{ t }} + 1.8463183175100548E-05) * {{ t }} + 0.0007868691311456133) * {{ t }} + 0.014875361290850615) * {{ t }} + 0.1369298809227358) * {{ t }} + 0.599832206555888) * {{ t }} + 1.0)
        end
    end)
{%- endmacro %}

{% macro normal_cdf(x) -%}
    {%- set u = '(cast(' ~ x ~ ' as double) / sqrt(2.0))' %}
    {%- set y = '(2.0 * ' ~ u ~ ' * ' ~ u ~ ')' %}
    {%- set series = namespace(text='1.0') %}
    {%- for n in range(100, 0, -1) %}
        {%- set series.text = '(1.0 + ' ~ y ~ ' / ' ~ (2 * n + 1) ~ '.0 * ' ~ series.text ~ ')' %}
    {%- endfor %}
    (case
        when {{ u }} > 6 then 1.0
        when {{ u }} < -6 then 0.0
        else 0.5 * (1.0 + 1.1283791670955126 * exp(-{{ u }} * {{ u }}) * {{ u }} * {{ series.text }})
    end)
{%- endmacro %}
