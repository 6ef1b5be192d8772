"""axe-core accessibility checks inside the browser tests' pages.

The axe-core script ships inside axe-playwright-python (nothing downloaded) and runs
through a DevTools session of its own, which the page's Content-Security-Policy does not
govern. With JavaScript off in the context the page runs no timers, and axe-core waits on
`setTimeout` between its rules: for those pages (`javascript=False`) timers are replaced by
microtasks while axe runs. The page's own script never runs, so the script-free rendering
is what is checked. A violation of impact "serious" or "critical" fails the test, naming
the page, the rule, its help text and the offending elements.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

FAILING_IMPACTS = frozenset({"serious", "critical"})
RUN_AXE = """axe.run(document, {resultTypes: ["violations"]}).then(results =>
  results.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
    nodes: v.nodes.map(n => ({target: n.target.join(" "), summary: n.failureSummary || ""})),
  })))"""
# Timers as microtasks, for a page whose scripting is off (see the module docstring).
TIMERS_AS_MICROTASKS = """(() => {
  const later = (fn, ...args) => { Promise.resolve().then(() => fn(...args)); return 0; };
  window.setTimeout = later;
  window.clearTimeout = () => {};
  window.requestAnimationFrame = fn => later(fn, performance.now());
  window.cancelAnimationFrame = () => {};
})()"""


@functools.cache
def axe_source() -> str:
    """axe.min.js as shipped by axe-playwright-python."""
    import axe_playwright_python

    return (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text("utf-8")


# Through a DevTools session (`Runtime.evaluate`), not the page: the pages allow no inline
# script, so `page.add_script_tag(content=...)` is refused (with a CSP error in the
# console), and a `bypass_csp` context would test the pages under another policy than they
# are served with. DevTools still evaluates scripts when the context turned JavaScript off.
def axe_violations(page: Any, *, javascript: bool = True) -> list[dict[str, Any]]:
    """Every axe-core violation on the page as it stands (all impacts)."""
    session = page.context.new_cdp_session(page)
    try:
        if not javascript:
            evaluate(session, TIMERS_AS_MICROTASKS)
        if not evaluate(session, "typeof window.axe === 'object'"):
            evaluate(session, axe_source())
        violations: list[dict[str, Any]] = evaluate(session, RUN_AXE)
    finally:
        session.detach()
    return violations


def evaluate(session: Any, expression: str) -> Any:
    """The value of a script run in the page, awaited when it is a promise."""
    answer = session.send(
        "Runtime.evaluate",
        {"expression": expression, "awaitPromise": True, "returnByValue": True},
    )
    if "exceptionDetails" in answer:
        raise AssertionError(f"axe-core could not run: {answer['exceptionDetails']}")
    return answer["result"].get("value")


def describe(violations: list[dict[str, Any]]) -> str:
    lines = []
    for violation in violations:
        lines.append(
            f"[{violation['impact']}] {violation['id']}: {violation['help']} "
            f"({violation['helpUrl']})"
        )
        for node in violation["nodes"]:
            lines.append(f"    {node['target']}: {' '.join(node['summary'].split())}")
    return "\n".join(lines)


def check_accessibility(page: Any, where: str = "", *, javascript: bool = True) -> None:
    """Fail on any serious or critical axe-core violation on the page; `javascript`
    False for a context that turned scripting off. A click that submits a form has
    started the next page, not loaded it: axe waits for its load."""
    page.wait_for_load_state("load")
    found = axe_violations(page, javascript=javascript)
    failing = [violation for violation in found if violation["impact"] in FAILING_IMPACTS]
    assert not failing, f"axe-core on {where or page.url}:\n{describe(failing)}"
