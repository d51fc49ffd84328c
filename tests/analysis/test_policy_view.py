"""The Policy screen's form read into a PolicyChange, and its winners and losers."""

from __future__ import annotations

import pytest

from tui.analysis.policy_view import FormError, form_change, winners_losers


def test_form_mirrors_replay_flags() -> None:
    change = form_change({"half_life": "1-0", "calc_period": "5", "reset_period": "weekly", "algorithm": "classic",
                          "damping": "2", "enforce_limits": "no", "qos_usage_factor": "low=0.5, high=2",
                          "billing": "gpu=CPU=1,GRES/gpu=8"})
    assert (change.half_life_s, change.calc_period_s, change.reset_period, change.algorithm) == \
        (86400.0, 300.0, "WEEKLY", "classic")
    assert change.damping == 2.0 and change.enforce_limits is False
    assert change.qos_usage_factor == {"low": 0.5, "high": 2.0}
    assert change.billing["gpu"]["cpu"] == 1.0


def test_empty_form_keeps_the_cluster_policy() -> None:
    change = form_change({})
    assert change.half_life_s is None and change.algorithm is None and not change.billing


@pytest.mark.parametrize(("form", "field"), [({"calc_period": "0"}, "calc period"),
                                             ({"reset_period": "hourly"}, "reset period"),
                                             ({"algorithm": "multifactor"}, "algorithm"),
                                             ({"damping": "-1"}, "damping"),
                                             ({"qos_usage_factor": "low"}, "QOS usage factors")])
def test_form_errors_name_the_field(form: dict[str, str], field: str) -> None:
    with pytest.raises(FormError) as err:
        form_change(form)
    assert err.value.field == field


def test_winners_and_losers() -> None:
    rows = [{"move": m, "account": "a", "user": str(i)} for i, m in enumerate([0.3, 0.1, 0.0, None, -0.05, -0.2])]
    winners, losers = winners_losers(rows, 1)  # type: ignore[arg-type]
    assert winners[0]["move"] == 0.3 and losers[0]["move"] == -0.2
