"""Tests for L{kubetwist.authentication.tokenfile}: the --token-auth-file format."""

from __future__ import annotations

from twisted.logger import capturedLogs
from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from kubetwist.authentication.authenticator import ITokenAuthenticator
from kubetwist.authentication.tokenfile import (
    CSVParseError,
    TokenFileAuthenticator,
    read_go_csv,
)
from kubetwist.authentication.user import UserInfo
from tests.authentication.fakes import resolved


class GoCSVTests(SynchronousTestCase):
    """read_go_csv follows Go's encoding/csv."""

    def test_plain(self) -> None:
        """Fields split on commas; spaces are kept; records carry their line numbers."""
        self.assertEqual(
            read_go_csv(b"a,b,c\n d , e,f\n"), [(1, ["a", "b", "c"]), (2, [" d ", " e", "f"])]
        )

    def test_quoted_commas_and_quotes(self) -> None:
        """A quoted field may hold commas and doubled quotes."""
        self.assertEqual(
            read_go_csv(b'a,"g1,g2","say ""hi"""\n'), [(1, ["a", "g1,g2", 'say "hi"'])]
        )

    def test_empty_lines_and_crlf(self) -> None:
        """Empty lines are skipped and CRLF endings are folded; no final newline is fine."""
        self.assertEqual(
            read_go_csv(b"\r\na,b\r\n\r\nc,d"), [(2, ["a", "b"]), (4, ["c", "d"])]
        )

    def test_multiline_quoted(self) -> None:
        """A quoted field may span lines; the record keeps its starting line."""
        self.assertEqual(read_go_csv(b'a,"x\ny",z\nq\n'), [(1, ["a", "x\ny", "z"]), (3, ["q"])])

    def test_trailing_comma(self) -> None:
        """A trailing comma makes a last empty field, after a quoted field too."""
        self.assertEqual(read_go_csv(b'a,\n"b",\n'), [(1, ["a", ""]), (2, ["b", ""])])

    def test_hash_is_not_a_comment(self) -> None:
        """Lines starting with # are ordinary records (no comment character is set)."""
        self.assertEqual(read_go_csv(b"#a,b\n"), [(1, ["#a", "b"])])

    def test_bare_quote(self) -> None:
        """A quote inside an unquoted field is Go's ErrBareQuote at its column."""
        with self.assertRaises(CSVParseError) as ctx:
            read_go_csv(b'ok,1,2\nab,c"d\n')
        self.assertEqual(
            str(ctx.exception), 'parse error on line 2, column 5: bare " in non-quoted field'
        )

    def test_text_after_closing_quote(self) -> None:
        """Text after a closing quote is Go's ErrQuote at the quote's column."""
        with self.assertRaises(CSVParseError) as ctx:
            read_go_csv(b'"ab"c,d\n')
        self.assertEqual(
            str(ctx.exception),
            'parse error on line 1, column 4: extraneous or missing " in quoted-field',
        )

    def test_unterminated_quote(self) -> None:
        """An unterminated quoted field spanning lines names both lines."""
        with self.assertRaises(CSVParseError) as ctx:
            read_go_csv(b'a,"b\nc\n')
        self.assertEqual(
            str(ctx.exception),
            'record on line 1; parse error on line 2, column 3: '
            'extraneous or missing " in quoted-field',
        )


class TokenFileTests(SynchronousTestCase):
    """TokenFileAuthenticator.from_file."""

    def _file(self, content: bytes) -> str:
        path = self.mktemp()
        with open(path, "wb") as f:
            f.write(content)
        return path

    def test_provides(self) -> None:
        """It is an ITokenAuthenticator."""
        self.assertTrue(verifyObject(ITokenAuthenticator, TokenFileAuthenticator({})))

    def test_records(self) -> None:
        """Three columns give name and uid; a fourth gives the comma-separated groups; more
        columns are ignored."""
        auth = TokenFileAuthenticator.from_file(self._file(
            b'token1,alice,uid1\ntoken2,bob,uid2,"g1,g2",ignored\ntoken3,carol,uid3,solo\n'
        ))
        self.assertEqual(resolved(auth.authenticate_token("token1")),
                         UserInfo(name="alice", uid="uid1"))
        self.assertEqual(
            resolved(auth.authenticate_token("token2")),
            UserInfo(name="bob", uid="uid2", groups=["g1", "g2"]),
        )
        self.assertEqual(resolved(auth.authenticate_token("token3")).groups, ["solo"])
        self.assertIsNone(resolved(auth.authenticate_token("token4")))

    def test_empty_group_column(self) -> None:
        """An empty fourth column is the single group "" (Go's strings.Split)."""
        auth = TokenFileAuthenticator.from_file(self._file(b"t,u,1,\n"))
        self.assertEqual(resolved(auth.authenticate_token("t")).groups, [""])

    def test_copies(self) -> None:
        """Each lookup returns a fresh user; changing it does not change the table."""
        auth = TokenFileAuthenticator.from_file(self._file(b't,u,1,"a"\n'))
        resolved(auth.authenticate_token("t")).groups.append("b")
        self.assertEqual(resolved(auth.authenticate_token("t")).groups, ["a"])

    def test_empty_token_skipped(self) -> None:
        """A record with an empty token is skipped with a warning naming its record number."""
        path = self._file(b"t,u,1\n,nobody,2\n")
        with capturedLogs() as events:
            auth = TokenFileAuthenticator.from_file(path)
        self.assertIsNone(resolved(auth.authenticate_token("")))
        self.assertEqual([(e["path"], e["record_num"]) for e in events], [(path, 2)])

    def test_duplicate_token_last_wins(self) -> None:
        """A repeated token takes the later record, with a warning."""
        path = self._file(b"t,first,1\nt,second,2\n")
        with capturedLogs() as events:
            auth = TokenFileAuthenticator.from_file(path)
        self.assertEqual(resolved(auth.authenticate_token("t")).name, "second")
        self.assertEqual(len(events), 1)
        self.assertIn("duplicate token", events[0]["log_format"])

    def test_too_few_columns(self) -> None:
        """A record with fewer than three columns is a ValueError naming file, count and line."""
        path = self._file(b"t,u,1\n\nonly,two\n")
        with self.assertRaises(ValueError) as ctx:
            TokenFileAuthenticator.from_file(path)
        self.assertEqual(
            str(ctx.exception),
            f"token file '{path}' must have at least 3 columns (token, user name, user uid), "
            "found 2 on line 3",
        )

    def test_parse_error(self) -> None:
        """Invalid CSV is a one-line ValueError with Go's parse error text."""
        path = self._file(b't,u"x,1\n')
        with self.assertRaises(ValueError) as ctx:
            TokenFileAuthenticator.from_file(path)
        self.assertEqual(
            str(ctx.exception),
            f"token file '{path}': parse error on line 1, column 4: bare \" in non-quoted field",
        )

    def test_missing_file(self) -> None:
        """A missing file is a ValueError in Go's open error form."""
        path = self.mktemp()
        with self.assertRaises(ValueError) as ctx:
            TokenFileAuthenticator.from_file(path)
        self.assertEqual(str(ctx.exception), f"open {path}: no such file or directory")

    def test_empty_file(self) -> None:
        """An empty file gives an authenticator that knows no token."""
        auth = TokenFileAuthenticator.from_file(self._file(b""))
        self.assertIsNone(resolved(auth.authenticate_token("x")))
