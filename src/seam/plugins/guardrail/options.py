"""Rule data: the full long-option lists of the programs the guard reads most.

With a program's whole list, an option nobody listed (a typo, or an option a newer version
added: ripgrep's `--hostname-bin` runs a program) is unproven rather than assumed
harmless, and an abbreviation is resolved against everything it could mean. Which of
these options are dangerous is said in `programs/`; this file only says which exist.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset("--" + word for word in text.split())


_SORT = _words(
    """ignore-leading-blanks dictionary-order ignore-case general-numeric-sort
    ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort random-source
    reverse sort version-sort batch-size check compress-program debug files0-from
    field-separator key merge output stable buffer-size temporary-directory parallel unique
    zero-terminated help version"""
)
_CAT = _words(
    """show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting
    help version"""
)
_HEAD = _words("bytes lines quiet silent verbose zero-terminated help version")
_TAIL = _words(
    """bytes follow lines max-unchanged-stats pid quiet silent retry sleep-interval verbose
    zero-terminated help version"""
)
_WC = _words("bytes chars lines files0-from max-line-length words total help version")
_LS = _words(
    """all almost-all author escape block-size ignore-backups color directory dired classify
    file-type format full-time group-directories-first no-group human-readable si
    dereference-command-line dereference-command-line-symlink-to-dir hide hyperlink
    indicator-style inode ignore kibibytes dereference numeric-uid-gid literal
    hide-control-chars show-control-chars quote-name quoting-style reverse recursive size
    sort time time-style tabsize width context zero help version"""
)
_GREP = _words(
    """extended-regexp fixed-strings basic-regexp perl-regexp regexp file ignore-case
    no-ignore-case word-regexp line-regexp null-data no-messages invert-match version help
    max-count byte-offset line-number no-line-number line-buffered with-filename
    no-filename label only-matching quiet silent binary-files text directories devices
    recursive dereference-recursive include exclude exclude-from exclude-dir
    files-without-match files-with-matches count initial-tab null before-context
    after-context context group-separator no-group-separator color colour binary"""
)
_DIFF = _words(
    """normal brief report-identical-files context unified side-by-side left-column
    suppress-common-lines show-c-function show-function-line label expand-tabs initial-tab
    tabsize suppress-blank-empty paginate new-file unidirectional-new-file ignore-case
    ignore-tab-expansion ignore-trailing-space ignore-space-change ignore-all-space
    ignore-blank-lines ignore-matching-lines text strip-trailing-cr ifdef old-group-format
    new-group-format unchanged-group-format changed-group-format line-format
    old-line-format new-line-format unchanged-line-format minimal speed-large-files
    horizon-lines recursive no-dereference exclude exclude-from starting-file from-file
    to-file ignore-file-name-case no-ignore-file-name-case color palette help version"""
)
_RG = _words(
    """after-context before-context binary block-buffered byte-offset case-sensitive color
    colors column context context-separator count count-matches crlf debug dfa-size-limit
    encoding engine field-context-separator field-match-separator files files-with-matches
    files-without-match fixed-strings follow generate glob glob-case-insensitive heading
    help hidden hostname-bin hyperlink-format iglob ignore-case ignore-file
    ignore-file-case-insensitive include-zero invert-match json line-buffered line-number
    line-regexp max-columns max-columns-preview max-count max-depth maxdepth max-filesize
    mmap multiline multiline-dotall null null-data one-file-system only-matching passthru
    passthrough path-separator pcre2 pcre2-version pre pre-glob pretty quiet
    regex-size-limit regexp replace search-zip smart-case sort sortr stats
    stop-on-nonmatch text threads trace trim type type-add type-clear type-list type-not
    unrestricted version vimgrep with-filename word-regexp auto-hybrid-regex"""
)

# Program -> every long option it has. A `--no-...` negation only turns something off.
LONG_OPTIONS: dict[str, frozenset[str]] = {
    "sort": _SORT,
    "cat": _CAT,
    "head": _HEAD,
    "tail": _TAIL,
    "wc": _WC,
    "ls": _LS,
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
    "diff": _DIFF,
    "rg": _RG,
}
NEGATABLE = frozenset({"rg"})
