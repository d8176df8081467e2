"""Joining a race by its room code: the lobby shows the code beside the invite link, a
second player types it on the home page (any case, with a space) and lands in the same
lobby; a mistyped or unknown code is explained, in the page's language."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from pages import Pages, assert_accessible, room_of

CODE_SHOWN = re.compile(r"^[ACDEFGHJKMNPQRTUVWXY]{3}-[ACDEFGHJKMNPQRTUVWXY]{3}$")


def test_a_second_player_joins_the_lobby_by_typing_its_code(pages: Pages) -> None:
    ann = pages.open(name="Ann")
    ann.click("[data-testid=create-race]")
    code_field = ann.locator("[data-testid=room-code]")
    expect(code_field).to_have_value(CODE_SHOWN)
    expect(code_field).to_have_accessible_name("Room code")
    expect(ann.locator("[data-testid=room-code-copy]")).to_have_accessible_name(
        "Copy the room code"
    )
    room = room_of(ann)
    shown = code_field.input_value()
    assert_accessible(ann)

    # Bea, in a browser of her own, types it as she heard it: lower case, a space.
    bea = pages.open(name="Bea")
    field = bea.get_by_role("textbox", name="Room code")
    field.fill(shown.replace("-", " ").lower())
    assert_accessible(bea)
    bea.click("[data-testid=join-code-submit]")
    expect(bea).to_have_url(re.compile(rf"#/room/{re.escape(room)}$"))
    expect(bea.locator("[data-testid=room-code]")).to_have_value(shown)
    expect(ann.locator("[data-testid=seats]")).to_contain_text("Bea")
    expect(bea.locator("[data-testid=seats]")).to_contain_text("Ann")


def test_a_mistyped_or_unknown_code_is_explained(pages: Pages) -> None:
    page = pages.open(name="Cy")
    field = page.locator("[data-testid=join-code]")
    error = page.get_by_test_id("join-code-error")
    field.fill("ABC-DE")  # B is in no code, and it is one letter short
    page.click("[data-testid=join-code-submit]")
    expect(error).to_have_text("A room code is six letters, like ACD-EFG.")
    field.fill("qqq qqq")
    page.click("[data-testid=join-code-submit]")
    expect(error).to_have_text("No open race has the code QQQ-QQQ.")
    expect(field).to_have_attribute("aria-invalid", "true")
    assert "#/room/" not in page.url
    assert_accessible(page)


def test_the_code_field_speaks_the_page_language(pages: Pages) -> None:
    page = pages.open(name="Dé", locale="fr-FR")
    expect(page.get_by_role("heading", name="Rejoindre avec un code")).to_be_visible()
    page.locator("[data-testid=join-code]").fill("WWW-WWW")
    page.click("[data-testid=join-code-submit]")
    unknown = "Aucune course ouverte n\u2019a le code WWW-WWW."
    expect(page.get_by_test_id("join-code-error")).to_have_text(unknown)
