# -*- test-case-name: tests.authentication.test_tokenfile -*-
"""
Static bearer tokens (C{--token-auth-file}): upstream
C{k8s.io/apiserver/pkg/authentication/token/tokenfile}.

The file is CSV as Go's C{encoding/csv} reads it (no comments, no space trimming, quotes only
around whole fields, empty lines skipped): C{token,user,uid[,"group1,group2"]} per record, any
further columns ignored.
"""

from __future__ import annotations

from twisted.internet import defer
from twisted.logger import Logger
from zope.interface import implementer

from kubetwist.authentication.authenticator import ITokenAuthenticator
from kubetwist.authentication.user import UserInfo

_log = Logger()

_ERR_BARE_QUOTE = 'bare " in non-quoted field'
_ERR_QUOTE = 'extraneous or missing " in quoted-field'


class CSVParseError(ValueError):
    """A record Go's C{encoding/csv} would reject; C{str()} is Go's C{ParseError.Error()}."""

    def __init__(self, start_line: int, line: int, column: int, err: str) -> None:
        self.start_line = start_line
        self.line = line
        self.column = column
        self.err = err
        if start_line != line:
            msg = (
                f"record on line {start_line}; parse error on line {line}, "
                f"column {column}: {err}"
            )
        else:
            msg = f"parse error on line {line}, column {column}: {err}"
        super().__init__(msg)


def read_go_csv(data: bytes) -> list[tuple[int, list[str]]]:
    """
    Parse C{data} as Go's C{csv.Reader} with C{FieldsPerRecord = -1} and default settings.

    Columns are 1-based byte offsets, lines 1-based, as Go reports them.

    @return: C{[(line number where the record starts, [field, ...]), ...]}; fields are decoded
        as UTF-8 (undecodable bytes kept as surrogate escapes).
    @raise CSVParseError: a bare quote in an unquoted field, or a malformed quoted field.
    """
    lines = data.split(b"\n")
    # Each element but the last ended with "\n"; Go folds a trailing "\r\n" into "\n".
    physical: list[bytes] = []
    for i, raw in enumerate(lines):
        last = i == len(lines) - 1
        if last:
            if raw == b"":
                break
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            physical.append(raw)
        else:
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            physical.append(raw + b"\n")

    records: list[tuple[int, list[str]]] = []
    n = 0
    while n < len(physical):
        line = physical[n]
        n += 1
        if line == b"\n":
            continue
        start_line = n
        line_no = n
        fields: list[bytes] = []
        col = 1
        while True:
            if not line.startswith(b'"'):
                i = line.find(b",")
                field = line if i < 0 else line[:i]
                if field.endswith(b"\n"):
                    field = field[:-1]
                j = field.find(b'"')
                if j >= 0:
                    raise CSVParseError(start_line, line_no, col + j, _ERR_BARE_QUOTE)
                fields.append(field)
                if i >= 0:
                    line = line[i + 1:]
                    col += i + 1
                    continue
                break
            # Quoted field.
            field_buf = b""
            line = line[1:]
            col += 1
            while True:
                i = line.find(b'"')
                if i >= 0:
                    field_buf += line[:i]
                    line = line[i + 1:]
                    col += i + 1
                    nxt = line[:1]
                    if nxt == b'"':
                        field_buf += b'"'
                        line = line[1:]
                        col += 1
                    elif nxt == b",":
                        line = line[1:]
                        col += 1
                        fields.append(field_buf)
                        break
                    elif line in (b"", b"\n"):
                        fields.append(field_buf)
                        line = b""
                        break
                    else:
                        raise CSVParseError(start_line, line_no, col - 1, _ERR_QUOTE)
                elif line:
                    # The quoted field goes on over the next line.
                    field_buf += line
                    col += len(line)
                    if n < len(physical):
                        line = physical[n]
                        n += 1
                        line_no += 1
                        col = 1
                    else:
                        raise CSVParseError(start_line, line_no, col, _ERR_QUOTE)
                else:
                    raise CSVParseError(start_line, line_no, col, _ERR_QUOTE)
            if line == b"":
                break
        records.append(
            (start_line, [f.decode("utf-8", "surrogateescape") for f in fields])
        )
    return records


@implementer(ITokenAuthenticator)
class TokenFileAuthenticator:
    """
    Bearer tokens from a fixed table (upstream C{tokenfile.TokenAuthenticator}).

    Wrap in L{kubetwist.authentication.bearertoken.BearerTokenAuthenticator} to authenticate
    requests.
    """

    def __init__(self, tokens: dict[str, UserInfo]) -> None:
        """
        @param tokens: C{{token: user}}.
        """
        self._tokens = dict(tokens)

    @classmethod
    def from_file(cls, path: str) -> "TokenFileAuthenticator":
        """
        Read a C{--token-auth-file}.

        Records: C{token,user name,uid} and optionally a fourth column of comma-separated
        groups (quoted, since it holds commas; an empty fourth column gives the one group
        C{""}, as upstream's C{strings.Split}).  A record with an empty token is skipped and a
        repeated token overrides the earlier one; both are logged as warnings, as upstream.

        @raise ValueError: the file cannot be read, is not valid CSV (Go's C{parse error on
            line N, column M: ...}), or a record has fewer than 3 columns; the one-line message
            names the file and the line.
        """
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ValueError(f"open {path}: {(e.strerror or str(e)).lower()}") from None
        try:
            records = read_go_csv(data)
        except CSVParseError as e:
            raise ValueError(f"token file '{path}': {e}") from None
        tokens: dict[str, UserInfo] = {}
        for record_num, (line, record) in enumerate(records, start=1):
            if len(record) < 3:
                raise ValueError(
                    f"token file '{path}' must have at least 3 columns (token, user name, "
                    f"user uid), found {len(record)} on line {line}"
                )
            token = record[0]
            if token == "":
                _log.warn(
                    "empty token has been found in token file '{path}', record number "
                    "'{record_num}'", path=path, record_num=record_num,
                )
                continue
            if token in tokens:
                _log.warn(
                    "duplicate token has been found in token file '{path}', record number "
                    "'{record_num}'", path=path, record_num=record_num,
                )
            groups = record[3].split(",") if len(record) >= 4 else []
            tokens[token] = UserInfo(name=record[1], uid=record[2], groups=groups)
        return cls(tokens)

    def authenticate_token(self, token: str) -> "defer.Deferred[UserInfo | None]":
        """
        The user for C{token}, or C{None} when it is not in the table.

        @return: a (fired) Deferred of a fresh copy, so callers may add groups freely.
        """
        return defer.succeed(self.lookup(token))

    def lookup(self, token: str) -> UserInfo | None:
        """L{authenticate_token}, synchronously."""
        user = self._tokens.get(token)
        if user is None:
            return None
        return UserInfo(
            name=user.name, uid=user.uid, groups=list(user.groups),
            extra={k: list(v) for k, v in user.extra.items()},
        )
