"""Topics recover what was planted, leave out code, URLs, numbers and stop words, and are deterministic."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pandas as pd
import pytest

import memvelope_tools as mv
from memvelope_tools._topic_units import count_words
from memvelope_tools._topics import Topics

PLANTED = {
    "garden": "tomato compost seedling mulch pruning greenhouse trellis basil soil harvest",
    "money": "mortgage dividend portfolio inflation budget savings pension equity bond interest",
    "kitchen": "recipe simmer saute garlic oven dough braise marinade skillet spatula",
    "trip": "itinerary passport layover hostel luggage museum ferry visa airport backpack",
}
_SHARED = "the and you that this with have about would could think maybe today week people time really"
SHARED = _SHARED.split()


def msg(i: int, role: str, ts: str | None, text: str) -> dict:
    return {"id": f"m{i}", "role": role, "ts": ts, "text": text}


def conv(cid: str, title: str | None, *messages: dict) -> dict:
    return {"id": cid, "title": title or "", "created_at": None, "updated_at": None, "messages": list(messages)}


def envelope(*convs: dict) -> dict:
    return {
        "memvelope": "envelope-v0",
        "meta": {
            "source_provider": "chatgpt",
            "conversation_count": len(convs),
            "message_count": sum(len(c["messages"]) for c in convs),
        },
        "conversations": list(convs),
    }


def planted(
    seed: int = 3, per_topic: int = 15, vocab: dict[str, str] = PLANTED, shared: dict[str, str] | None = None
) -> tuple[dict, list[str]]:
    """Conversations of four messages each: a third of the words from their topic, the rest shared (the
    words of ``shared[topic]`` when given, else English ones)."""
    rng = random.Random(seed)
    names = list(vocab)
    order = [name for name in names for _ in range(per_topic)]
    rng.shuffle(order)
    convs = []
    for c, name in enumerate(order):
        words = vocab[name].split()
        common = shared[name].split() if shared else SHARED
        messages = []
        for j in range(4):
            text = " ".join(rng.choice(words) if rng.random() < 0.35 else rng.choice(common) for _ in range(40))
            ts = f"2024-{1 + c % 12:02d}-{1 + j:02d}T12:00:00.000Z"
            messages.append(msg(j, ("user", "assistant")[j % 2], ts, text))
        convs.append(conv(f"c{c}", None, *messages))
    return envelope(*convs), order


def recovered(found: Topics, order: list[str]) -> dict[str, tuple[int, float]]:
    """For each planted topic: the recovered topic most of its conversations are in, and that share."""
    main = found.assignments["topic"].to_numpy(dtype=np.float64)
    out = {}
    for name in dict.fromkeys(order):
        mine = main[[i for i, o in enumerate(order) if o == name]]
        values, counts = np.unique(mine[~np.isnan(mine)], return_counts=True)
        out[name] = (int(values[counts.argmax()]), counts.max() / len(mine))
    return out


# ---- recovery ------------------------------------------------------------------------------------


def test_planted_topics_are_recovered():
    env, order = planted()
    found = mv.topics(env, n_topics=4)
    assert found.n_topics == 4 and found.unit == "conversation"
    best = recovered(found, order)
    assert all(share >= 0.8 for _, share in best.values()), best
    assert len({topic for topic, _ in best.values()}) == 4  # each planted topic has its own
    for name, (topic, _) in best.items():
        top = set(found.terms.loc[found.terms["topic"] == topic, "term"].head(5))
        assert top <= set(PLANTED[name].split()), (name, top)
        label = found.labels[topic].split(" · ")
        assert len(label) == 3 and set(label) <= set(PLANTED[name].split())


def test_the_same_input_and_seed_give_the_same_topics():
    env, _ = planted(seed=5)
    a, b = mv.topics(env, n_topics=4, seed=7), mv.topics(env, n_topics=4, seed=7)
    pd.testing.assert_frame_equal(a.terms, b.terms)
    pd.testing.assert_frame_equal(a.assignments, b.assignments)
    pd.testing.assert_series_equal(a.labels, b.labels)


def test_topics_are_numbered_by_size():
    env, order = planted(per_topic=6)
    extra, extra_order = planted(seed=11, per_topic=12, vocab={"garden": PLANTED["garden"]})
    env["conversations"] += extra["conversations"]
    found = mv.topics(env, n_topics=4)
    sizes = found.assignments["topic"].value_counts().reindex(range(4), fill_value=0)
    assert sizes.is_monotonic_decreasing
    assert recovered(found, order + extra_order)["garden"][0] == 0  # the planted topic with most conversations


def test_non_english_planted_topics_with_diacritics():
    vocab = {
        "bakery": "bäckerei brötchen sauerteig roggen mehl ofen kruste hefe teig brezel",
        "fromage": "fromagerie camembert affinage lait caillé crème brebis chèvre croûte cave",
        "fútbol": "fútbol portería árbitro delantero balón estadio penalti córner gol afición",
    }
    # German, French and Spanish stop words around the planted words.
    shared = {
        "bakery": "und der die das ist nicht ich wir auch aber",
        "fromage": "le la les et est pas nous vous dans pour",
        "fútbol": "el los las y es no muy pero para como",
    }
    env, order = planted(per_topic=12, vocab=vocab, shared=shared)
    found = mv.topics(env, n_topics=3)
    best = recovered(found, order)
    assert all(share >= 0.8 for _, share in best.values()), best
    assert len({topic for topic, _ in best.values()}) == 3
    terms = set(found.terms["term"])
    assert {"bäckerei", "brötchen", "caillé", "fútbol", "árbitro"} & terms
    assert not {"und", "der", "les", "est", "los", "muy"} & terms
    assert {"german", "french", "spanish"} <= set(found.languages)


def test_chinese_text_gives_ideographs_as_terms():
    vocab = {
        "tea": "茶 壶 杯 绿 泡 叶 香 煮",
        "snow": "雪 冰 冷 滑 山 冬 寒 霜",
    }
    env, order = planted(per_topic=10, vocab=vocab)
    found = mv.topics(env, n_topics=2)
    best = recovered(found, order)
    assert all(share >= 0.8 for _, share in best.values()), best
    tea_terms = set(found.terms.loc[found.terms["topic"] == best["tea"][0], "term"].head(4))
    assert tea_terms <= set(vocab["tea"].split())


# ---- what counts as a word -----------------------------------------------------------------------


def test_code_urls_and_numbers_are_not_words():
    texts = pd.Series(
        [
            "Here is zebra code:\n```python\ndef giraffe_function(x):\n    return okapi + 42\n```\nand more zebra",
            "See https://example.com/pangolin?q=lemur and www.tapir.org/x for `inline_wombat` details 2024 3.14",
            "An unclosed fence ```bash\nrm -rf narwhal\n",
            "Python3 and ISO8601 and 12345 and l'élève",
        ]
    )
    counts, vocabulary = count_words(texts, np.arange(4), 4)
    words = set(vocabulary)
    assert {"zebra", "here", "code", "see", "details", "python", "iso", "élève"} <= words
    assert not {"giraffe", "function", "okapi", "def", "return", "narwhal", "rm", "rf"} & words
    assert not {"pangolin", "lemur", "tapir", "example", "com", "https", "inline", "wombat"} & words
    assert not any(ch.isdigit() for w in words for ch in w)
    zebra = list(vocabulary).index("zebra")
    assert counts[0, zebra] == 2


def test_word_counts_per_unit():
    texts = pd.Series(["apple banana apple", "Banana CHERRY", "apple"])
    counts, vocabulary = count_words(texts, np.array([0, 1, 0]), 2)  # texts 0 and 2 are one unit
    table = pd.DataFrame(counts.toarray(), columns=list(vocabulary))
    assert table.to_dict("list") == {"apple": [3, 0], "banana": [1, 1], "cherry": [0, 1]}


def test_english_stop_words_and_chat_small_talk_never_become_terms():
    env, _ = planted(seed=9)
    found = mv.topics(env, n_topics=4)
    assert not set(SHARED) & set(found.terms["term"])
    assert found.languages == ()  # nothing but English here


def test_extra_stop_words_are_left_out():
    env, _ = planted(seed=9)
    found = mv.topics(env, n_topics=4, stop_words=["tomato", "Mortgage"])
    assert not {"tomato", "mortgage"} & set(found.terms["term"])


# ---- small histories -----------------------------------------------------------------------------


def test_an_empty_history_is_a_clear_error():
    for source in (envelope(), [], mv.messages_frame(envelope())):
        with pytest.raises(mv.TopicsError, match="history is empty") as info:
            mv.topics(source)
        assert info.value.reason == "no-text" and isinstance(info.value, mv.MemvelopeError)


def test_a_history_with_only_code_and_numbers_is_a_clear_error():
    env = envelope(conv("a", None, msg(1, "user", None, "```\nprint(1)\n```"), msg(2, "assistant", None, "42 + 7")))
    with pytest.raises(mv.TopicsError, match="the only conversation has no word left"):
        mv.topics(env)


def test_one_conversation_gives_one_topic_with_a_warning():
    env = envelope(conv("a", "Sourdough", msg(1, "user", "2024-03-01T00:00:00.000Z", "sourdough starter hydration")))
    with pytest.warns(UserWarning, match="only 1 conversation with words .* finding 1 topic, not 12"):
        found = mv.topics(env, n_topics=12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mv.topics(env).n_topics == 1  # not asked for a number: nothing to warn about
    assert found.n_topics == 1
    row = found.assignments.iloc[0]
    assert row["topic"] == 0 and row["weight"] == pytest.approx(1.0) and row["conversation_id"] == "a"
    assert set(found.terms["term"]) == {"sourdough", "starter", "hydration"}  # the title counts too


def test_more_topics_than_the_data_allows_are_lowered_with_a_warning():
    env, _ = planted(per_topic=1)
    with pytest.warns(UserWarning, match="finding 4 topics, not 10"):
        found = mv.topics(env, n_topics=10)
    assert found.n_topics == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mv.topics(env, n_topics=3)


def test_bad_arguments():
    env, _ = planted(per_topic=2)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="n_topics"):
            mv.topics(env, n_topics=bad)
    with pytest.raises(ValueError, match="unit"):
        mv.topics(env, unit="paragraph")


def test_a_conversation_without_words_has_no_topic():
    env, _ = planted(per_topic=5)
    env["conversations"].append(conv("code-only", None, msg(0, "user", "2024-01-01T00:00:00.000Z", "`x = 1`")))
    found = mv.topics(env, n_topics=4)
    row = found.assignments.set_index("conversation_id").loc["code-only"]
    assert pd.isna(row["topic"]) and pd.isna(row["weight"]) and pd.isna(row["label"])
    assert found.assignments["topic"].notna().sum() == 20


# ---- units and assignments -----------------------------------------------------------------------


def test_assignment_columns_and_weights():
    env, _ = planted(per_topic=5)
    found = mv.topics(env, n_topics=4)
    a = found.assignments
    assert list(a.columns[:9]) == [
        "source",
        "conv_index",
        "conversation_id",
        "title",
        "ts",
        "n_messages",
        "topic",
        "label",
        "weight",
    ]
    weights = a[[f"weight_{t}" for t in range(4)]].to_numpy()
    assert np.allclose(weights.sum(axis=1), 1.0)
    assert (a["weight"].to_numpy(dtype=float) == weights.max(axis=1)).all()
    assert (a["topic"].to_numpy(dtype=int) == weights.argmax(axis=1)).all()
    assert list(a["label"]) == [found.labels[t] for t in a["topic"]]
    assert (a["n_messages"] == 4).all()
    assert (a["ts"] == pd.to_datetime([c["messages"][0]["ts"] for c in env["conversations"]], utc=True)).all()


def test_message_units():
    env, _ = planted(per_topic=5)
    found = mv.topics(env, n_topics=4, unit="message")
    a = found.assignments
    assert found.unit == "message" and len(a) == 80
    assert {"position", "role"} <= set(a.columns)
    assert list(a["position"][:4]) == [0, 1, 2, 3]


def test_terms_table():
    env, _ = planted()
    found = mv.topics(env, n_topics=4)
    t = found.terms
    assert list(t.columns) == ["topic", "label", "rank", "term", "weight"]
    assert (t.groupby("topic").size() == 10).all()
    for _, group in t.groupby("topic"):
        assert list(group["rank"]) == list(range(10))
        assert group["weight"].is_monotonic_decreasing
        assert group["label"].iloc[0] == " · ".join(group["term"].head(3))
    assert "4 topics over 60 conversations" in repr(found)


# ---- over time -----------------------------------------------------------------------------------


def dated(*pairs: tuple[str, str]) -> dict:
    """One conversation per (timestamp, topic name), its text from that topic's words."""
    return envelope(
        *[
            conv(f"c{i}", None, msg(0, "user", ts, " ".join(PLANTED[name].split() * 3)))
            for i, (ts, name) in enumerate(pairs)
        ]
    )


def test_over_time_shares_and_counts_per_month_with_empty_months():
    env = dated(
        ("2024-01-05T00:00:00.000Z", "garden"),
        ("2024-01-20T00:00:00.000Z", "garden"),
        ("2024-01-25T00:00:00.000Z", "money"),
        ("2024-03-02T00:00:00.000Z", "money"),
    )
    found = mv.topics(env, n_topics=2)
    garden = found.assignments.loc[0, "label"]
    money = found.assignments.loc[2, "label"]
    assert garden != money
    counts = found.over_time(counts=True)
    assert list(counts.index.strftime("%Y-%m-%d")) == ["2024-01-01", "2024-02-01", "2024-03-01"]
    assert counts.index.name == "period" and list(counts.columns) == list(found.labels)
    assert counts[garden].tolist() == [2, 0, 0] and counts[money].tolist() == [1, 0, 1]
    shares = found.over_time()
    assert shares[garden].tolist() == pytest.approx([2 / 3, 0, 0])
    assert shares[money].tolist() == pytest.approx([1 / 3, 0, 1])
    yearly = found.over_time("year")
    assert len(yearly) == 1 and yearly[garden].iloc[0] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="freq"):
        found.over_time("fortnight")


def test_over_time_follows_the_time_zone_and_leaves_out_undated():
    env = dated(("2024-01-31T23:30:00.000Z", "garden"), ("2024-01-10T00:00:00.000Z", "money"))
    env["conversations"].append(conv("undated", None, msg(0, "user", None, PLANTED["money"])))
    found = mv.topics(env, n_topics=2)
    utc = found.over_time(counts=True)
    assert list(utc.index.strftime("%Y-%m")) == ["2024-01"] and int(utc.to_numpy().sum()) == 2
    berlin = found.over_time(tz="Europe/Berlin", counts=True)  # 00:30 on 1 February in Berlin
    assert list(berlin.index.strftime("%Y-%m")) == ["2024-01", "2024-02"]
    assert berlin.sum(axis=1).tolist() == [1, 1]


# ---- inputs --------------------------------------------------------------------------------------


def test_every_kind_of_source_gives_the_same_topics(tmp_path):
    env, _ = planted()
    expected = mv.topics(env, n_topics=4)
    path = tmp_path / "h.mve.json"
    mv.write_envelope(env, path)
    folder = tmp_path / "pq"
    mv.to_parquet(env, folder, sources=["doc0"])
    for source in (path, mv.messages_frame(env), folder, [env]):
        found = mv.topics(source, n_topics=4)
        pd.testing.assert_frame_equal(found.terms, expected.terms, obj=type(source).__name__)
        assert list(found.assignments["topic"]) == list(expected.assignments["topic"])


def test_topics_of_the_bundled_exports():
    envs = [mv.convert(mv.sample_path(name)) for name in ("chatgpt", "claude")]
    found = mv.topics(envs, n_topics=6)
    assert found.n_topics == 6 and len(found.assignments) == 80
    assert found.assignments["topic"].notna().all()
    kafka = found.assignments.loc[found.assignments["title"] == "Kafka consumer lag keeps growing", "topic"].iloc[0]
    dbt = found.assignments.loc[
        found.assignments["title"] == "dbt incremental model with late-arriving data", "topic"
    ].iloc[0]
    assert kafka == dbt  # two data-engineering conversations end up together


# ---- the report ----------------------------------------------------------------------------------


def test_the_report_has_a_topics_section():
    from memvelope_tools._report import build_report

    env, _ = planted(per_topic=5)
    html = build_report([env])
    section = html[html.index("<h2>Topics</h2>") :]
    assert section.count("<img ") == 2  # shares over time, and the terms of each topic
    assert "4 topics found" in section
    table = section[section.index("<table>") : section.index("</table>")]
    assert table.count("<tr>") == 1 + 4  # header and one row per topic
    found = mv.topics(env, n_topics=4)
    for label in found.labels:
        assert label in table


def test_the_report_finds_topics_wherever_topics_does():
    # One rule for both: a small history gets topics in the report as it does from topics().
    from memvelope_tools._report import build_report

    env, _ = planted(per_topic=2)  # 8 conversations: two topics, at one per five and at least two
    html = build_report([env])
    section = html[html.index("<h2>Topics</h2>") :]
    assert "Too few" not in section
    assert "2 topics found" in section and section.count("<img ") == 2
    for label in mv.topics(env, n_topics=2).labels:
        assert label in section
    env = envelope(env["conversations"][0])
    section = build_report([env])
    section = section[section.index("<h2>Topics</h2>") :]
    assert "1 topic found" in section and mv.topics(env, n_topics=1).n_topics == 1


# ---- very long words -----------------------------------------------------------------------------


def test_a_word_of_more_than_forty_letters_is_no_word():
    forty, forty_one = "ab" * 20, "ab" * 20 + "c"
    counts, vocabulary = count_words(pd.Series([f"tomato {forty} {forty_one} {forty}"]), np.arange(1), 1)
    assert list(vocabulary) == ["tomato", forty]
    assert counts.toarray().tolist() == [[1, 2]]


def _with_a_huge_word(per_topic: int) -> tuple[dict, str]:
    """The planted history with a word of 2,000,000 letters in every garden conversation, and three
    conversations of that word alone: a topic's first term, were it counted."""
    env, order = planted(per_topic=per_topic)
    huge = "zyx" * 666_667
    for conversation, name in zip(env["conversations"], order, strict=True):
        if name == "garden":
            conversation["messages"][0]["text"] += f" {huge} "
    alone = [conv(f"h{i}", None, msg(0, "user", "2024-06-01T12:00:00.000Z", f"{huge} {huge}")) for i in range(3)]
    return envelope(*env["conversations"], *alone), huge


def test_a_huge_word_is_never_a_topic_term_and_the_other_terms_are_found():
    env, huge = _with_a_huge_word(per_topic=15)
    found = mv.topics(env, n_topics=5)
    terms = set(found.terms["term"])
    assert not any(len(term) > 40 for term in terms)
    assert huge not in terms
    assert len(set(PLANTED["garden"].split()) & terms) >= 5  # its conversations still make their topic


def test_the_report_draws_no_huge_word_in_its_topics():
    from memvelope_tools._report import build_report

    env, huge = _with_a_huge_word(per_topic=5)
    html = build_report([env])
    section = html[html.index("<h2>Topics</h2>") :]
    assert "4 topics found" in section
    assert huge[:41] not in html


# ---- histories in other languages ----------------------------------------------------------------


def chatty(
    vocab: dict[str, str],
    listed: str,
    unlisted: str,
    *,
    per_topic: int = 12,
    seed: int = 1,
    share: float = 0.6,
    on_topic: int = 30,
) -> tuple[dict, list[str]]:
    """Conversations of one language: ``on_topic`` planted topic words, 40 of that language's stop words
    (``listed``) and common words its stop-word list lacks (``unlisted``: each in about ``share`` of
    the conversations, as an assistant's "for example" or "if you want" is)."""
    rng = random.Random(seed)
    order = [name for name in vocab for _ in range(per_topic)]
    rng.shuffle(order)
    convs = []
    for c, name in enumerate(order):
        words = [rng.choice(vocab[name].split()) for _ in range(on_topic)]
        words += [rng.choice(listed.split()) for _ in range(40)]
        words += [w for w in unlisted.split() for _ in range(rng.randint(1, 3)) if rng.random() < share]
        rng.shuffle(words)
        ts = f"2024-{1 + c % 12:02d}-01T12:00:00.000Z"
        convs.append(conv(f"c{c}", None, msg(0, "user", ts, " ".join(words))))
    return envelope(*convs), order


DUTCH = {
    "fiets": "fiets band ketting zadel remmen versnelling stuur spaken trapper velg",
    "moestuin": "moestuin tomaten compost zaaien wieden sla courgette bonen gieter kas",
    "belasting": "belasting aangifte toeslag aftrek hypotheekrente box inkomen teruggave fiscaal vermogen",
    "verhuizen": "verhuizen dozen huurcontract sleutels verhuisbus makelaar inboedel adres gemeente buren",
}
DUTCH_LISTED = "de het een van en in is dat op te voor met zijn niet je ook als maar bij om dan naar wat"
DUTCH_UNLISTED = "zoals helpen tijd graag voorbeeld gebruiken belangrijk manier verschillende kunt"

ITALIAN = {
    "cucina": "ricetta pasta sugo forno impasto basilico parmigiano risotto pentola soffritto",
    "calcio": "partita squadra allenatore campionato rigore portiere attaccante stadio arbitro gol",
    "viaggio": "viaggio treno albergo valigia biglietto spiaggia museo traghetto prenotazione aeroporto",
    "lavoro": "colloquio curriculum stipendio contratto azienda ufficio collega responsabile ferie carriera",
}
ITALIAN_LISTED = "il la di che e un una per non con sono del della nel anche come più questo mi ti"
ITALIAN_UNLISTED = "vuoi puoi esempio posso aiutarti certo ecco dimmi"


def assert_each_topic_is_one_theme(found: Topics, vocab: dict[str, str]) -> None:
    """Every topic's label is three words of one planted theme (a theme may span two topics)."""
    for label in found.labels:
        assert any(set(label.split(" · ")) <= set(words.split()) for words in vocab.values()), found.labels.tolist()


def test_a_dutch_history_gets_topics_not_its_common_words():
    env, _ = chatty(DUTCH, DUTCH_LISTED, DUTCH_UNLISTED)
    found = mv.topics(env, n_topics=6)  # more topics than planted, as on a real history
    assert found.languages == ("dutch",)
    assert not set(DUTCH_UNLISTED.split()) & set(found.terms["term"]), found.labels.tolist()
    assert not set(DUTCH_LISTED.split()) & set(found.terms["term"])
    assert_each_topic_is_one_theme(found, DUTCH)


def test_an_italian_history_gets_topics_not_its_common_words():
    env, _ = chatty(ITALIAN, ITALIAN_LISTED, ITALIAN_UNLISTED)
    found = mv.topics(env, n_topics=6)
    assert found.languages == ("italian",)
    assert not set(ITALIAN_UNLISTED.split()) & set(found.terms["term"]), found.labels.tolist()
    assert_each_topic_is_one_theme(found, ITALIAN)


def test_a_dutch_and_english_history_names_only_those_languages():
    # Half the conversations Dutch, each with a few words of its topic and the words every Dutch answer
    # has (in 9 of 10 Dutch conversations: under half of all), half English.
    dutch, _ = chatty(DUTCH, DUTCH_LISTED, DUTCH_UNLISTED, per_topic=10, share=0.9, on_topic=4)
    english, _ = planted(seed=4, per_topic=10)
    env = envelope(*dutch["conversations"], *english["conversations"])
    found = mv.topics(env)
    assert found.n_topics == 12 and found.languages == ("dutch",)
    assert not set(DUTCH_UNLISTED.split()) & set(found.terms["term"]), found.labels.tolist()
    assert_each_topic_is_one_theme(found, {**DUTCH, **PLANTED})  # no topic of Dutch small words


def test_chinese_words_are_character_bigrams_not_single_characters():
    # Sentences as people write them: no spaces, stop characters (我, 一, 个, 的, 是, ...) between the words.
    themes = {
        "排序": ["我想写一个冒泡排序", "冒泡排序的时间复杂度是多少", "用冒泡排序给数组排序", "冒泡排序和快速排序"],
        "咖啡": ["我每天早上喝咖啡", "手冲咖啡的水温是多少", "咖啡豆怎么保存", "意式咖啡和手冲咖啡"],
        "跑步": ["我想开始跑步训练", "跑步的时候膝盖疼", "马拉松跑步计划", "跑步鞋怎么选"],
    }
    rng = random.Random(2)
    order = [name for name in themes for _ in range(10)]
    rng.shuffle(order)
    convs = [
        conv(f"c{i}", None, msg(0, "user", None, "，".join(rng.sample(themes[name], 3)) + "。"))
        for i, name in enumerate(order)
    ]
    found = mv.topics(envelope(*convs), n_topics=3)
    terms = set(found.terms["term"])
    assert {"冒泡", "排序", "咖啡", "跑步"} <= terms
    assert not {"冒", "泡", "排", "序", "写"} & terms  # no word broken into its characters
    assert all(len(t) <= 2 for t in terms), terms
    assert not any(ch in "我的是一个和" for t in terms for ch in t)  # stop characters separate words
    best = recovered(found, order)
    assert all(share >= 0.8 for _, share in best.values()), best


# ---- distinct topics -----------------------------------------------------------------------------


def test_topics_never_list_the_same_terms():
    # Two conversations sharing a word: factorising them into two topics gives two with the same terms.
    env = envelope(
        conv("a", None, msg(0, "user", None, "cherry")),
        conv("b", None, msg(0, "user", None, "apple cherry apple banana")),
    )
    with pytest.warns(UserWarning, match="1 of the 2 topics found had the same top terms as another"):
        found = mv.topics(env, n_topics=2)
    assert found.n_topics == 1 and found.assignments["topic"].tolist() == [0, 0]
    assert set(found.terms["term"]) == {"apple", "banana", "cherry"}
    rng = random.Random(0)
    words = ["apple", "banana", "cherry", "grape", "melon"]
    for _ in range(40):  # small histories, many topics asked for
        convs = [
            conv(f"c{c}", None, msg(0, "user", None, " ".join(rng.choices(words[: rng.randint(1, 5)], k=4))))
            for c in range(rng.randint(2, 8))
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            found = mv.topics(envelope(*convs), n_topics=rng.randint(2, 5))
        lists = [frozenset(group["term"]) for _, group in found.terms.groupby("topic")]
        assert len(set(lists)) == len(lists), lists
        assert np.allclose(found.assignments[[f"weight_{t}" for t in range(found.n_topics)]].sum(axis=1), 1.0)


# ---- how many topics -----------------------------------------------------------------------------


def test_the_report_and_topics_look_for_the_same_number_of_topics():
    from memvelope_tools._report import build_report
    from memvelope_tools._topic_count import topic_count

    assert [topic_count(n) for n in (1, 10, 14, 15, 59, 60, 10_000)] == [2, 2, 2, 3, 11, 12, 12]
    env, _ = planted(per_topic=18)  # 72 conversations: 12 topics
    found = mv.topics(env)
    assert found.n_topics == 12
    section = build_report([env])
    section = section[section.index("<h2>Topics</h2>") :]
    assert "12 topics found" in section


# ---- the command ---------------------------------------------------------------------------------


def test_the_command_takes_more_stop_words_from_a_file(tmp_path, capsys):
    import json

    from memvelope_tools.cli import main

    env, _ = planted(seed=9)
    path = tmp_path / "h.mve.json"
    mv.write_envelope(env, path)
    words = tmp_path / "words.txt"
    words.write_text("\ufefftomato\n\n  Mortgage  \n", encoding="utf-8")

    def terms(*extra: str) -> set[str]:
        assert main(["topics", str(path), "-n", "4", "--json", *extra]) == 0
        return {t for topic in json.loads(capsys.readouterr().out)["topics"] for t in topic["terms"]}

    assert {"tomato", "mortgage"} <= terms()
    assert not {"tomato", "mortgage"} & terms("--stop-words", str(words))
    assert main(["topics", str(path), "--stop-words", str(tmp_path / "missing.txt")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"memvelope: error: no such stop-words file (in {tmp_path / 'missing.txt'})"]
    words.write_bytes(b"caf\xe9\n")
    assert main(["topics", str(path), "--stop-words", str(words)]) == 1
    assert "not UTF-8" in capsys.readouterr().err
