"""Completion-card tests run real git at the end of every execution, so their SimCord is
patient; the typing refresh is parked past its deadline (``typing_past_patient_settle``)."""

import pytest


@pytest.fixture(autouse=True)
def _patient(typing_past_patient_settle: None) -> None:
    return None
