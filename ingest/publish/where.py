"""The `--where` rules: one read-only condition over a slice's rows, as the analyst meant it.

The text is parsed with sqlglot (DuckDB's dialect) and what runs is sqlglot's rendering of the
condition, never the raw text: a trailing `-- comment` cannot swallow the parenthesis the slice
puts around it, and `x = 1) or (1 = 1` is not a condition at all. A dimension whose name is an SQL
keyword (`case`, `format`) and stands where a column does (before a comparison) is read as that
column, so `case = 'sepsis/s40-07'` means what it says. The condition is then checked as `hindsight
query` checks a query (no DDL, no file or URL reads), and the columns it reads are returned, so a
slice joins only the dimensions' marts it needs.
"""
from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from ingest.errors import InputError
from ingest.publish.query import check_read_only

FIX = "write one condition over the dimensions, e.g. \"cohort = 'sepsis' and format = 'multiple choice'\""
# what can follow a column in a condition: a keyword before one of these is a column's name
COMPARISONS = {TokenType.EQ, TokenType.NEQ, TokenType.LT, TokenType.LTE, TokenType.GT, TokenType.GTE, TokenType.IN,
               TokenType.IS, TokenType.NOT, TokenType.LIKE, TokenType.ILIKE, TokenType.BETWEEN, TokenType.GLOB,
               TokenType.NULLSAFE_EQ, TokenType.R_PAREN, TokenType.COMMA, TokenType.AND, TokenType.OR}
NAMES = (TokenType.VAR, TokenType.IDENTIFIER)


@dataclass(frozen=True)
class Condition:
    sql: str                 # sqlglot's rendering, to paste into a query
    columns: frozenset[str]  # the column names it reads


def _quote_keyword_columns(text: str, names: set[str]) -> str:
    """TEXT with each keyword that is one of NAMES and stands where a column does double-quoted."""
    try:
        tokens = Dialect.get_or_raise("duckdb").tokenize(text)
    except sqlglot.errors.TokenError:
        return text                      # the parser says what is wrong
    out, done = [], 0
    for i, token in enumerate(tokens):
        following = tokens[i + 1].token_type if i + 1 < len(tokens) else None
        if (token.token_type not in NAMES and token.text.lower() in names
                and (following is None or following in COMPARISONS)):
            out += [text[done:token.start], f'"{token.text.lower()}"']
            done = token.end + 1
    return "".join(out) + text[done:]


MAX_CHARS = 4000            # a condition, not a program: longer is refused before it is parsed


def parse_where(text: str, names: set[str], option: str = "--where") -> Condition:
    """TEXT as one checked read-only condition; NAMES are the columns a keyword may be (the dimensions)."""
    if len(text) > MAX_CHARS:
        raise InputError(option, f"{len(text)} characters, more than a condition's {MAX_CHARS}", FIX)
    try:
        return _parse(text, names, option)
    except sqlglot.errors.TokenError:
        raise InputError(option, "not one condition: it cannot be read word by word (an unclosed quote?)", FIX) from None
    except RecursionError:
        raise InputError(option, "not one condition: nested too deeply to read", FIX) from None


def _parse(text: str, names: set[str], option: str) -> Condition:
    quoted = _quote_keyword_columns(text, names)
    prefix = "select 1 from slice_rows where "
    try:
        statements = [s for s in sqlglot.parse(prefix + quoted, read="duckdb") if s is not None]
    except sqlglot.errors.ParseError as error:
        first = error.errors[0] if error.errors else {}
        at = f" near character {max(first['col'] - len(prefix), 1)}" if first.get("col") and quoted == text else ""
        raise InputError(option, f"not one condition: {first.get('description', 'cannot parse it')}{at}", FIX) from None
    where = statements[0].args.get("where") if len(statements) == 1 else None
    if where is None or len(statements) != 1:
        raise InputError(option, f"{len(statements)} statements, not one condition", FIX)
    condition = where.this
    rendered = condition.sql(dialect="duckdb", comments=False)
    try:
        check_read_only(f"select 1 from slice_rows where {rendered}")
    except InputError as error:
        raise InputError(option, str(error).split(": ", 1)[-1].split(". Fix:")[0], FIX) from None
    return Condition(rendered, frozenset(column.name for column in condition.find_all(exp.Column)))
