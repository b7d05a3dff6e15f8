"""Pieces shared by the commands: pagination options and formatting."""

import json

from osc_lib.cli import format_columns


def add_pagination(parser, marker_help):
    parser.add_argument('--limit', metavar='<n>', type=int,
                        help='One page of at most <n> items (default: '
                             'every item, page after page).')
    parser.add_argument('--marker', metavar='<marker>', help=marker_help)


def show(item, formatters=None):
    """(columns, values) of one resource for a ShowOne command."""
    formatters = formatters or {}
    columns = tuple(item)
    values = tuple(formatters[k](item[k]) if k in formatters else item[k]
                   for k in columns)
    return columns, values


def listing(items, fields, formatters=None):
    """(headers, rows) for a Lister: ``fields`` is [(header, key)...]."""
    formatters = formatters or {}
    headers = tuple(h for h, _ in fields)
    rows = (tuple(formatters[k](item.get(k)) if k in formatters
                  else item.get(k) for _, k in fields) for item in items)
    return headers, rows


class JSONColumn(format_columns.DictColumn):
    """A nested structure: indented JSON in tables, as is in json/yaml."""

    def human_readable(self):
        return json.dumps(self._value, indent=1, sort_keys=True)


LIST = format_columns.ListColumn
LIST_OF_DICTS = format_columns.ListDictColumn
DICT = format_columns.DictColumn
