"""The settle policy: the observation after a step is the settled page. A step waits for short
timers (also chained ones, and ones set from a promise callback) and animation-frame callbacks
the action started, not for long timers, and gives up on a page that never settles at
``settle_timeout_ms`` (reporting what is still pending in ``info["unsettled"]``)."""

from __future__ import annotations

import pytest

from adaroll.envs.base import TaskSpec

pytestmark = pytest.mark.web

# A button whose click starts the work under test; every piece of work appends a <p> to the area.
BUTTON_JS = """
(() => {
  const area = document.getElementById('area');
  area.replaceChildren();
  const say = (text) => { const p = document.createElement('p'); p.textContent = text; area.appendChild(p); };
  const b = document.createElement('button');
  b.textContent = 'work';
  b.style.cssText = 'position:absolute; left:0; top:60px; width:160px; height:40px';
  b.onclick = () => { %s };
  area.appendChild(b);
  window.__say = say;
  return true;
})()
"""


def _press(env, work: str):
    env.reset(options={"task": TaskSpec("web", "click-button", 0)})
    env.evaluate(BUTTON_JS % work.replace("say(", "__say("))
    button = next(e for e in env.observe().elements if e.text == "work")
    from adaroll.actions import Action

    obs, _, _, _, info = env.step(Action.tap(*button.center))
    return {e.text for e in obs.elements}, info


@pytest.mark.parametrize(
    "work, said",
    [
        ("setTimeout(() => say('timer'), 300)", "timer"),
        ("setTimeout(() => setTimeout(() => say('chained'), 100), 200)", "chained"),
        (
            "setTimeout(() => Promise.resolve().then(() => setTimeout(() => say('after promise'), 50)), 100)",
            "after promise",
        ),
        ("requestAnimationFrame(() => requestAnimationFrame(() => say('frame')))", "frame"),
    ],
)
def test_a_step_waits_for_the_short_timers_and_frames_it_started(web_env, work, said) -> None:
    texts, info = _press(web_env, work)
    assert said in texts and info["unsettled"] == 0


def test_a_cancelled_timer_is_not_waited_for(web_env) -> None:
    texts, info = _press(
        web_env, "const t = setTimeout(() => say('cancelled'), 100); clearTimeout(t); say('now');"
    )
    assert "now" in texts and "cancelled" not in texts and info["unsettled"] == 0


def test_a_step_does_not_wait_for_long_timers(web_env) -> None:
    texts, info = _press(web_env, "setTimeout(() => say('later'), 5000); say('now');")
    assert "now" in texts and "later" not in texts and info["unsettled"] == 0


def test_a_page_that_never_settles_is_given_up_on(web_env) -> None:
    texts, info = _press(
        web_env, "const loop = () => { setTimeout(loop, 5); }; loop(); say('busy');"
    )
    assert "busy" in texts and info["unsettled"] > 0
