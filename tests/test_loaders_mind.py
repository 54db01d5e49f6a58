"""The MIND loader on small `behaviors.tsv` / `news.tsv` files in the published format, written here:
clicks at impression time, history before the first impression, the last clicked impression as the
user's pool, several splits, bad input (one line, exit 2, nothing written), and memory on a
generated file of 200,000 impressions."""

from __future__ import annotations

import calendar
import tracemalloc
from pathlib import Path

import pytest

from recgraph.cli import main
from world.datasets import load_path
from world.errors import DataFormatError
from world.loaders.mind import load_mind, parse_time
from world.split import leave_one_out

NEWS = [
    "N1\tsports\tfootball_nfl\tThe &amp; Game\tA close finish.\thttps://x.invalid/1\t[]\t[]",
    "N2\tnews\tnewsus\tCity Council\t\thttps://x.invalid/2\t[]\t[]",
    "N3\tlifestyle\tlifestyleroyals\tA Wedding\tPhotos.\thttps://x.invalid/3\t[]\t[]",
    "N4\tsports\tbasketball\tTip-off\tSeason starts.",  # url and entities missing
    "N5\tfinance\tmarkets\tStocks\tUp again.\thttps://x.invalid/5\t[]\t[]",
    "N6\tnews\tnewsworld\tUnseen\tNobody saw it.\thttps://x.invalid/6\t[]\t[]",
]
BEHAVIORS = [
    "1\tU1\t11/11/2019 9:05:58 AM\tN3 N2\tN1-1 N4-0 N5-0",
    "2\tU2\t11/12/2019 1:00:00 PM\t\tN2-1 N1-0",
    "3\tU1\t11/13/2019 12:30:00 AM\tN3 N2\tN4-1 N5-1 N2-0",
    "4\tU1\t11/12/2019 8:00:00 PM\tN3 N2\tN5-0 N1-0",
]
T1 = calendar.timegm((2019, 11, 11, 9, 5, 58, 0, 0, 0))


def write(folder: Path, behaviors: list[str] = BEHAVIORS, news: list[str] = NEWS) -> Path:
    """`behaviors.tsv` and `news.tsv` in `folder`; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "behaviors.tsv").write_text("\n".join(behaviors) + "\n", encoding="utf-8")
    (folder / "news.tsv").write_text("\n".join(news) + "\n", encoding="utf-8")
    return folder


def test_times_are_read_as_utc() -> None:
    path = Path("behaviors.tsv")
    assert parse_time(path, 1, "11/11/2019 9:05:58 AM") == T1
    assert parse_time(path, 1, "11/13/2019 12:30:00 AM") == calendar.timegm((2019, 11, 13, 0, 30, 0, 0, 0, 0))
    assert parse_time(path, 1, "11/13/2019 12:30:00 PM") == calendar.timegm(
        (2019, 11, 13, 12, 30, 0, 0, 0, 0)
    )
    with pytest.raises(DataFormatError, match="line 1: time '2019-11-11' is not like"):
        parse_time(path, 1, "2019-11-11")


def test_clicks_history_and_news(tmp_path: Path) -> None:
    data = load_path(write(tmp_path / "MINDsmall_train"))
    assert data.name == "MINDsmall_train" and data.has_time
    events = sorted((e.user_id, e.timestamp, e.item_id) for e in data.interactions)
    t3 = calendar.timegm((2019, 11, 13, 0, 30, 0, 0, 0, 0))
    assert events == [
        ("U1", T1 - 2, "N3"),  # history: one second apart, before the first impression, in order
        ("U1", T1 - 1, "N2"),
        ("U1", T1, "N1"),
        ("U1", t3, "N4"),  # two clicks of one impression share its time
        ("U1", t3, "N5"),
        ("U2", calendar.timegm((2019, 11, 12, 13, 0, 0, 0, 0, 0)), "N2"),
    ]
    assert all(e.rating is None and e.review is None for e in data.interactions)
    assert set(data.items) == {"N1", "N2", "N3", "N4", "N5"}  # N6 is named by no line
    game = data.items["N1"]
    assert (game.title, game.categories, game.description) == (
        "The & Game",
        ("sports", "football_nfl"),
        "A close finish.",
    )
    assert data.items["N2"].description is None
    assert data.items["N4"].title == "Tip-off"


def test_last_clicked_impression_is_the_pool_and_the_split_is_leave_one_out(tmp_path: Path) -> None:
    data = load_mind(write(tmp_path / "mind"))
    assert data.presplit is not None and set(data.presplit) == {"U1"}  # U2 has one click only
    fixed = data.presplit["U1"]
    # line 3 is U1's latest impression with a click (line 4 is later in the file, earlier in time)
    assert (fixed.history, fixed.valid, fixed.target) == (("N3", "N2", "N1"), "N4", "N5")
    assert fixed.candidates == ("N4", "N5", "N2")
    case = leave_one_out(data)["U1"]
    unfixed = leave_one_out(type(data)(data.name, data.items, data.interactions))["U1"]
    assert [e.item_id for e in case.history] == [e.item_id for e in unfixed.history]
    assert (case.valid.item_id, case.target.item_id) == (unfixed.valid.item_id, unfixed.target.item_id)


def test_history_item_clicked_later_is_kept_once(tmp_path: Path) -> None:
    data = load_mind(write(tmp_path / "m", ["1\tU1\t11/11/2019 9:05:58 AM\tN3 N1\tN1-1 N2-0"]))
    assert sorted((e.timestamp, e.item_id) for e in data.interactions) == [(T1 - 1, "N3"), (T1, "N1")]


def test_train_and_dev_subfolders_load_as_one(tmp_path: Path) -> None:
    write(tmp_path / "MIND" / "MINDsmall_train", BEHAVIORS[:2])
    write(tmp_path / "MIND" / "MINDsmall_dev", ["9\tU1\t11/15/2019 9:00:00 AM\tN3 N2 N1\tN6-1 N2-0"])
    data = load_path(tmp_path / "MIND")
    assert data.name == "MIND"
    u1 = sorted((e.timestamp, e.item_id) for e in data.interactions if e.user_id == "U1")
    assert [item for _, item in u1] == ["N3", "N2", "N1", "N6"]  # N1: clicked in train, history in dev
    assert data.presplit is not None and data.presplit["U1"].candidates == ("N6", "N2")
    assert load_path(tmp_path / "MIND" / "MINDsmall_dev" / "behaviors.tsv").name == "MINDsmall_dev"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("1\tU1\t11/11/2019 9:05:58 AM\tN1\tN2-1 N3-2", "line 1: malformed impression 'N3-2'"),
        (
            "1\tU1\t11/11/2019 9:05:58 AM\tN1\tN2 N3",
            "line 1: malformed impression 'N2'.*test split has no labels",
        ),
        ("1\tU1\t11/11/2019 9:05:58 AM\tN1", "line 1: expected 5 tab-separated fields, found 4"),
        ("1\tU1\t11/11/2019 9:05:58 AM\tN1 N99\tN2-1", "line 1: news id 'N99' is not in news.tsv"),
        ("1\tU1\t11/11/2019 25:05:58 AM\tN1\tN2-1", "line 1: time '11/11/2019 25:05:58 AM'"),
        ("1\tU1\t2/30/2019 1:05:58 AM\tN1\tN2-1", "line 1: time '2/30/2019 1:05:58 AM'"),
    ],
)
def test_malformed_behaviors_name_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    folder = write(tmp_path / "m", [line])
    with pytest.raises(DataFormatError, match=problem) as caught:
        load_mind(folder)
    assert caught.value.path == str(folder / "behaviors.tsv")


def test_short_news_line_is_named(tmp_path: Path) -> None:
    folder = write(tmp_path / "m", BEHAVIORS, [*NEWS, "N7\tnews"])
    with pytest.raises(DataFormatError, match=r"news.tsv, line 7: expected at least 4"):
        load_mind(folder)


def test_malformed_impression_exits_2_with_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write(tmp_path / "m", [BEHAVIORS[0], "2\tU2\t11/12/2019 1:00:00 PM\t\tN2-yes"])
    out = tmp_path / "run"
    argv = ["bench", "--dataset", str(folder), "--methods", "popularity", "--users", "5", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        f"recgraph: error: {folder / 'behaviors.tsv'}, line 2: malformed impression 'N2-yes': expected "
        "<news id>-1 (clicked) or -0 (MIND's test split has no labels)\n"
    )
    assert not out.exists()


@pytest.mark.slow
def test_200k_impressions_load_under_a_memory_bound(tmp_path: Path) -> None:
    """200,000 impressions of 20 shown news each (about 45 MB of text) load in under 64 MB of
    Python allocations (tracemalloc's peak): negatives other than each user's last clicked
    impression are not kept, so memory follows the 200,000 clicks and 20,000 pools (keeping every
    impression's shown list would add about 43 MB: 200,000 lists of 20)."""
    users, news = 20_000, 5_000
    folder = tmp_path / "mind"
    write(folder, [], [f"N{k}\tnews\tnewsus\tHeadline {k}\tAbstract {k}." for k in range(news)])
    with (folder / "behaviors.tsv").open("w", encoding="utf-8") as out:
        for k in range(200_000):
            user, hour = k % users, 1 + (k // users) % 12
            shown = " ".join(f"N{(k * 31 + j * 997) % news}-0" for j in range(19))
            history = f"N{(user + 1) % news}"  # never clicked by this user
            out.write(f"{k}\tU{user}\t11/11/2019 {hour}:00:00 PM\t{history}\tN{k % news}-1 {shown}\n")
    tracemalloc.start()
    try:
        data = load_mind(folder)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(data.interactions) == 200_000 + users  # every click, and one history item per user
    assert data.presplit is not None and len(data.presplit) == users
    print(f"peak {peak / 2**20:.1f} MB")
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.1f} MB"
