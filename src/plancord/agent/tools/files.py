"""The file tools, one module each: ``view``, ``globbing`` (``glob``), ``grep``, and ``edit``
(``create_file``, ``str_replace``); ``fileio`` opens files so that what is checked is what
is read or written, and ``globmatch`` matches globs in bounded time. This module gathers
their public names for the registry and for callers that want them from one place.
"""

from plancord.agent.tools.edit import (
    MAX_EDIT_FILE_BYTES,
    MAX_WRITE_BYTES,
    CreateFileTool,
    StrReplaceTool,
    write_text_file,
)
from plancord.agent.tools.globbing import MAX_GLOB_MATCHES, MAX_WALK_ENTRIES, GlobTool
from plancord.agent.tools.grep import (
    GREP_MAX_COLUMNS,
    LONG_LINE_NOTE,
    MAX_GREP_OUTPUT_BYTES,
    MAX_GREP_RESULTS,
    GrepTool,
)
from plancord.agent.tools.view import MAX_DIR_ENTRIES, MAX_VIEW_BYTES, MAX_VIEW_LINES, ViewTool

__all__ = [
    "GREP_MAX_COLUMNS",
    "LONG_LINE_NOTE",
    "MAX_DIR_ENTRIES",
    "MAX_EDIT_FILE_BYTES",
    "MAX_GLOB_MATCHES",
    "MAX_GREP_OUTPUT_BYTES",
    "MAX_GREP_RESULTS",
    "MAX_VIEW_BYTES",
    "MAX_VIEW_LINES",
    "MAX_WALK_ENTRIES",
    "MAX_WRITE_BYTES",
    "CreateFileTool",
    "GlobTool",
    "GrepTool",
    "StrReplaceTool",
    "ViewTool",
    "write_text_file",
]
