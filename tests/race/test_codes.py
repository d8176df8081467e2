"""Room codes as text: the alphabet, drawing, and reading what people type."""

from __future__ import annotations

import pytest

from klondike_live import keys
from klondike_live.race import codes


def test_the_alphabet_has_no_look_alikes() -> None:
    assert len(codes.ALPHABET) == len(set(codes.ALPHABET)) == 20
    assert codes.ALPHABET.isalpha() and codes.ALPHABET.isupper()
    for confusable in "0O1IL5S2Z8B":
        assert confusable not in codes.ALPHABET
    assert len(codes.ALPHABET) ** codes.LENGTH == 64_000_000


def test_drawn_codes_are_canonical_and_varied() -> None:
    drawn = {codes.new_code() for _ in range(500)}
    assert all(codes.is_code(code) and code == codes.normalise(code) for code in drawn)
    assert len(drawn) > 490  # 64 million codes: repeats in 500 draws are very rare
    assert set("".join(drawn)) == set(codes.ALPHABET)


@pytest.mark.parametrize(
    ("typed", "code"),
    [
        ("ACDEFG", "ACDEFG"),
        ("acdefg", "ACDEFG"),
        ("AcD-eFg", "ACDEFG"),
        ("  acd efg ", "ACDEFG"),
        ("a-c-d e-f-g", "ACDEFG"),
        ("ACD\u2013EFG", "ACDEFG"),  # an en dash, as phones type one
        ("ACD\u00a0EFG", "ACDEFG"),
        ("ACD\tEFG\n", "ACDEFG"),
    ],
)
def test_typed_text_is_read_whatever_its_case_spaces_and_dashes(typed: str, code: str) -> None:
    assert codes.normalise(typed) == code


@pytest.mark.parametrize(
    "typed",
    [
        "",
        "ACDEF",  # too short
        "ACDEFGH",  # too long
        "ACDEF0",  # a digit
        "ACDEFO",  # O is not in the alphabet (nor I, L, S, Z, B)
        "ACDEFB",
        "ACD_EFG",
        "ACD.EFG",
        "ÀCDEFG",
        "ACDEFG" + " " * 40,  # too long a text to look at
        "ACD/EFG",
    ],
)
def test_text_that_is_no_code_is_refused(typed: str) -> None:
    assert codes.normalise(typed) is None


def test_codes_are_shown_in_two_groups_and_read_back() -> None:
    assert codes.grouped("ACDEFG") == "ACD-EFG"
    assert codes.normalise(codes.grouped("HJKMNP")) == "HJKMNP"


def test_only_canonical_codes_reach_a_key_name() -> None:
    assert keys.code("ACDEFG") == "kl:code:ACDEFG"
    for bad in ("acdefg", "ACD-EFG", "ACDEF", "kl:*"):
        with pytest.raises(ValueError, match="room code"):
            keys.code(bad)
