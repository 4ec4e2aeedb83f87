"""The judge reads states, not pages: a task succeeds when exactly the asked-for changes are
there (harmless ones aside), and the state diff names every row that changed."""

from __future__ import annotations

import copy

from adaroll.envs.apps.state import checksum, diff
from adaroll.envs.apps.tasks.judge import Allow, Expect, Goal, Has, Text, met

START = {
    "mail": {
        "messages": {
            "1": {"id": 1, "folder": "Inbox", "subject": "Budget", "read": 0, "starred": 0},
            "2": {"id": 2, "folder": "Inbox", "subject": "Lunch", "read": 0, "starred": 0},
        }
    },
    "notes": {"notes": {"5": {"id": 5, "title": "Grocery list", "updated": "2024-01-01"}}},
}


def changed(**edits):
    state = copy.deepcopy(START)
    for path, value in edits.items():
        app, table, key, col = path.split("__")
        if value is None:
            del state[app][table][key]
        elif col == "row":
            state[app][table][key] = value
        else:
            state[app][table][key][col] = value
    return state


ARCHIVE = Goal((Expect("update", "mail", "messages", {"folder": "Archive"}, key="1"),))


def test_an_asked_update_succeeds_and_an_untouched_state_does_not():
    assert ARCHIVE.verdict(START, changed(mail__messages__1__folder="Archive")).success
    verdict = ARCHIVE.verdict(START, START)
    assert not verdict.success and "not done" in verdict.describe()


def test_harmless_columns_are_ignored_and_other_changes_fail():
    now = changed(mail__messages__1__folder="Archive", mail__messages__2__read=1)
    assert ARCHIVE.verdict(START, now).success  # opening another message only marks it read
    now = changed(mail__messages__1__folder="Archive", mail__messages__2__folder="Trash")
    verdict = ARCHIVE.verdict(START, now)
    assert not verdict.success and "unexpected: mail.messages[2] updated" in verdict.describe()
    deleted = changed(mail__messages__1__folder="Archive", notes__notes__5__row=None)
    assert "notes.notes[5] deleted" in ARCHIVE.verdict(START, deleted).describe()


def test_inserts_are_counted_and_matched_by_value():
    sent = Goal(
        (Expect("insert", "mail", "messages", {"folder": "Sent", "subject": Text("re: budget")}),)
    )
    reply = {"id": 3, "folder": "Sent", "subject": "Re:  Budget", "read": 1, "starred": 0}
    assert sent.verdict(START, changed(mail__messages__3__row=reply)).success
    two = changed(mail__messages__3__row=reply, mail__messages__4__row={**reply, "id": 4})
    assert "2 matching new row(s), want 1" in sent.verdict(START, two).describe()
    assert Has("budget")("The Budget review") and not Has("lunch")("Budget")


def test_allowed_changes_and_partial_expectations():
    goal = Goal(
        (Expect("update", "mail", "messages", {"starred": 1}, key="2"),),
        allow=(Allow("mail", "messages", frozenset({"update"}), frozenset({"folder"})),),
    )
    now = changed(mail__messages__2__starred=1, mail__messages__1__folder="Archive")
    assert goal.verdict(START, now).success
    assert met(START, now, goal.expects)
    wrong_kind = Goal((Expect("delete", "notes", "notes", key="5"),))
    assert (
        "updated instead"
        in wrong_kind.verdict(START, changed(notes__notes__5__title="x")).describe()
    )


def test_diff_and_checksum_see_every_row():
    now = changed(mail__messages__2__starred=1, notes__notes__5__row=None)
    changes = diff(START, now)
    assert [(c.app, c.table, c.key, c.kind) for c in changes] == [
        ("mail", "messages", "2", "update"),
        ("notes", "notes", "5", "delete"),
    ]
    assert changes[0].columns == {"starred"}
    assert checksum(START) == checksum(copy.deepcopy(START)) != checksum(now)
