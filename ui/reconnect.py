"""A page whose server died runs at once on the server its browser reconnects to.

Streamlit's front end asks for a run when its websocket connects again only if the page has a
fragment that reruns on a timer; otherwise the new server's session stays empty until the next
interaction, and a download clicked before it is refused ("session ID mismatch": the browser
still names the dead server's session). So every page carries one such fragment, which draws
nothing. The run it brings sends every widget's value, which wins over the address
(`ui.urlstate`): the page on screen stays as the user left it.
"""
import streamlit as st

# how often the empty fragment reruns: only its presence matters, so seldom
INTERVAL = "1h"


@st.fragment(run_every=INTERVAL)
def _timer() -> None:
    """Nothing to draw."""


def run_again_on_reconnect() -> None:
    _timer()
