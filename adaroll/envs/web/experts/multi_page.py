"""Experts for tasks that move between views of one page: a folder tree, search results over
several result pages, social-media posts and their menus, an email inbox (open, reply,
forward, delete, star)."""

from __future__ import annotations

import json
import re

from adaroll.actions import Action
from adaroll.envs.web.experts.page import ExpertError, Page, _fill_then, _quoted, _sel, expert

# -- multi-page tasks -------------------------------------------------------------------------------


@expert("navigate-tree")
def _navigate_tree(p: Page) -> Action:
    (name,) = _quoted(p.utterance)[-1:]
    spans = f"X.all('#tree span').filter(s => X.text(s) === {json.dumps(name)})"
    if p.js(f"{spans}.some(s => X.shown(s))"):
        return p.act_on(f"{spans}.find(s => X.shown(s))")
    # open the outermost collapsed folder on the way to the first match
    return p.act_on(
        f"(() => {{ let s = {spans}[0], top = null;"
        " for (let ul = s.closest('ul'); ul && ul.id !== 'tree';"
        " ul = ul.parentElement.closest('ul')) {"
        " if (!X.shown(ul)) top = ul.previousElementSibling; } return top; })()"
    )


@expert("search-engine")
def _search_engine(p: Page) -> Action:
    m = re.search(
        r'enter "(.*)" and press "Search", then find and click the (\d+)\w\w', p.utterance
    )
    assert m is not None
    term, pos = m.group(1), int(m.group(2))
    action = p.fill(_sel("#search-text"), term)
    if action is not None:
        return action
    if not p.js("X.all('#page-content a').length") or p.js(
        "X.all('#page-content a').some(a => a.getAttribute('data-result') === '-1')"
    ):
        return p.act_on(_sel("#search"))
    page = (pos - 1) // 3 + 1
    active = p.js("X.text(X.q('#pagination li.active a'))")
    if active != str(page):
        return p.act_on(f"X.all('#pagination a').find(a => X.text(a) === '{page}')")
    return p.act_on(_sel(f'#page-content a[data-result="{pos - 1}"]'))


@expert("social-media")
def _social_media(p: Page) -> Action:
    m = re.search(r'user (\S+), click on the "(.*)" button', p.utterance)
    assert m is not None
    user, label = m.groups()
    actions = {
        "Share via DM": "share",
        "Copy link to Tweet": "copy",
        "Embed Tweet": "embed",
        "Mute": "menu-user",
        "Block": "block-user",
        "Report": "report",
        "Reply": "reply",
        "Retweet": "retweet",
        "Like": "like",
    }
    cls = actions[label]
    media = f"X.all('#area .media').find(m => X.text(X.q('.username', m)) === {json.dumps(user)})"
    if cls in ("reply", "retweet", "like"):
        return p.act_on(f"X.q('.controls .{cls}', {media})")
    if p.js(f"X.q('.controls ul', {media}).classList.contains('hide')"):
        return p.act_on(f"X.q('.controls .more', {media})")
    return p.act_on(f"X.q('.controls ul li.{cls}', {media})")


@expert("social-media-some", "social-media-all")
def _social_media_some(p: Page) -> Action:
    m = re.search(r'Click the "(\w+)" button on (\d+|all) posts? by (\S+) and then', p.utterance)
    assert m is not None
    label, user = m.group(1), m.group(3)
    cls = label.lower()
    mine = (
        f"X.all('#area .media').filter(m => X.text(X.q('.username', m)) === "
        f"{json.dumps(user)}).map(m => X.q('.{cls}', m))"
    )
    amount = p.js(f"{mine}.length") if m.group(2) == "all" else int(m.group(2))
    active = p.js(f"{mine}.filter(s => s.classList.contains('active')).length")
    if active < amount:
        return p.act_on(f"{mine}.find(s => !s.classList.contains('active'))")
    if active > amount:
        return p.act_on(f"{mine}.find(s => s.classList.contains('active'))")
    return p.act_on(_sel("#submitRow button"))


_EMAIL_PATTERNS = [
    (r"Find the email by (.+) and reply to them with the text \"(.*)\"\.", "reply"),
    (r"Find the email by (.+) and forward that email to (.+)\.", "forward"),
    (r"Find the email by (.+) and click the trash icon to delete it\.", "delete"),
    (r"Find the email by (.+) and click the star icon to mark it as important\.", "important"),
]


def _email_goal(p: Page) -> tuple[str, str, str]:
    """(action, sender name, reply text or forward recipient)."""
    fields = p.js("core.currentFields || null")
    if fields and "by" in fields and "to" in fields:
        return "forward", fields["by"], fields["to"]
    if fields and "task" in fields and "by" in fields:  # the -nl-turk variants
        action = {"star": "important"}.get(fields["task"], fields["task"])
        return action, fields["by"], fields.get("message") or fields.get("to") or ""
    for pattern, action in _EMAIL_PATTERNS:
        m = re.fullmatch(pattern, p.utterance)
        if m:
            return action, m.group(1), (m.group(2) if m.lastindex and m.lastindex > 1 else "")
    raise ExpertError(f"cannot parse the email task {p.utterance!r}")


@expert(
    "email-inbox",
    "email-inbox-delete",
    "email-inbox-forward-nl",
    "email-inbox-reply",
    "email-inbox-forward",
    "email-inbox-important",
    "email-inbox-noscroll",
    "email-inbox-star-reply",
    "email-inbox-nl-turk",
    "email-inbox-forward-nl-turk",
)
def _email_inbox(p: Page) -> Action:
    action, name, arg = _email_goal(p)
    if p.exists(_sel("#reply")):
        return _fill_then(p, [(_sel("#reply-text"), arg)], _sel("#send-reply"))
    if p.exists(_sel("#forward")):
        return _fill_then(p, [(_sel("#forward .forward-sender"), arg)], _sel("#send-forward"))
    if p.exists(_sel("#email")):
        if p.js("X.text(X.q('#email .email-sender'))") != name:
            return p.act_on(_sel("#close-email"))
        target = {
            "delete": "#email .trash",
            "important": "#email .star",
            "reply": "#email .email-reply",
            "forward": "#email .email-forward",
        }[action]
        return p.act_on(_sel(target))
    if not p.exists(_sel("#main")):
        return p.act_on(_sel("#search-cancel"))
    thread = (
        f"X.all('#main .email-thread').find(t => X.text(X.q('.email-sender', t)) === "
        f"{json.dumps(name)})"
    )
    if action == "delete":
        return p.act_on(f"X.q('.trash', {thread})")
    if action == "important":
        return p.act_on(f"X.q('.star', {thread})")
    return p.act_on(f"X.q('.email-sender', {thread})")
