"""The embedder layer: hashing, WordPiece, MiniLM, HTTP adapters, factory."""

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

import ctx.hub.retrieval.embedders as embedders
from ctx.engine import CtxError
from ctx.hub.retrieval.embedders import (
    EMBEDDER_KINDS,
    Embedder,
    EmbedderError,
    HashingEmbedder,
    MiniLMEmbedder,
    OllamaEmbedder,
    OpenAIEmbedder,
    WordPieceTokenizer,
    make_embedder,
)


def assert_is_embedder(embedder):
    # Embedder is a static Protocol; this checks the same three members
    # without reading `dimensions`, which may ask a server.
    for member in ("name", "dimensions", "embed"):
        assert hasattr(type(embedder), member), member
    assert isinstance(embedder.name, str)
    assert "@" in embedder.name


def cosine(a, b):
    return float(np.dot(a, b))


def assert_unit_rows(vectors, count, dimensions):
    assert vectors.dtype == np.float32
    assert vectors.shape == (count, dimensions)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


# -- hashing ----------------------------------------------------------------


def test_hashing_rows_are_unit_float32():
    embedder = HashingEmbedder()
    vectors = embedder.embed(["hello world", "", "!!!", "a much longer text " * 20])
    assert_unit_rows(vectors, 4, 384)
    assert embedder.name == "hashing-384@1"
    assert embedder.dimensions == 384
    assert_is_embedder(embedder)


def test_hashing_empty_input_has_shape_zero_by_d():
    assert HashingEmbedder(64).embed([]).shape == (0, 64)


def test_hashing_size_is_configurable_and_named():
    embedder = HashingEmbedder(dimensions=128)
    assert embedder.embed(["x y z"]).shape == (1, 128)
    assert embedder.name == "hashing-128@1"


@pytest.mark.parametrize("dimensions", [0, 15, -3, 2.5, True])
def test_hashing_rejects_bad_sizes(dimensions):
    with pytest.raises(EmbedderError, match=r"hashing embedder.*\.$"):
        HashingEmbedder(dimensions)


def test_hashing_ranks_shared_words_and_typos_above_unrelated_text():
    a, b, c, d = HashingEmbedder().embed(
        [
            "reset my password",
            "password reset steps",
            "the weather in Paris is sunny",
            "reset my pasword",
        ]
    )
    assert cosine(a, b) > cosine(a, c) + 0.3
    assert cosine(a, d) > 0.6  # char trigrams survive the typo
    assert cosine(a, d) < 0.999


def test_hashing_ignores_case_and_is_order_sensitive_through_bigrams():
    a, b, c = HashingEmbedder().embed(["Dark Mode", "dark mode", "mode dark"])
    np.testing.assert_allclose(a, b)
    assert 0.5 < cosine(a, c) < 0.99


def test_hashing_is_the_same_in_another_process():
    texts = ["hello world", "Zürich café", "", "ids: 01HX5 and 2024-03-15"]
    code = (
        "import sys, json; from ctx.hub.retrieval.embedders import HashingEmbedder; "
        "v = HashingEmbedder(384).embed(json.loads(sys.argv[1])); "
        "print(v.tobytes().hex())"
    )
    other = subprocess.run(
        [sys.executable, "-c", code, json.dumps(texts)],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
    )
    here = HashingEmbedder(384).embed(texts)
    assert other.stdout.strip() == here.tobytes().hex()


# -- WordPiece --------------------------------------------------------------

# Ids computed by the `tokenizers` package (0.23.3) with all-MiniLM-L6-v2's
# tokenizer.json; "hello" (7592) and "world" (2088) checked by hand in vocab.txt.
# fmt: off
GOLDEN_IDS = [
    ("hello world", [101, 7592, 2088, 102]),
    ("How do I reset my password?", [101, 2129, 2079, 1045, 25141, 2026, 20786, 1029, 102]),
    ("The user prefers dark mode; don't change it!", [101, 1996, 5310, 19233, 2601, 5549, 1025, 2123, 1005, 1056, 2689, 2009, 999, 102]),
    ("Naïve café owners in Zürich ÉLÈVENT des crêpes.", [101, 15743, 7668, 5608, 1999, 10204, 5408, 2102, 4078, 13675, 13699, 2229, 1012, 102]),
    ("unaffable antidisestablishmentarianism", [101, 14477, 20961, 3468, 3424, 10521, 4355, 7875, 13602, 3672, 12199, 2964, 102]),
    ("北京大学 and 東京 are cities", [101, 1781, 1755, 1810, 1817, 1998, 1879, 1755, 2024, 3655, 102]),
    ("e-mail me at bob@example.com: https://ctx.dev/docs?q=1#top", [101, 1041, 1011, 5653, 2033, 2012, 3960, 1030, 2742, 1012, 4012, 1024, 16770, 1024, 1013, 1013, 14931, 2595, 1012, 16475, 1013, 9986, 2015, 1029, 1053, 1027, 1015, 1001, 2327, 102]),
    ("tabs\tnew\nlines\r\nand\x00nulls\x07bells", [101, 21628, 2015, 2047, 3210, 1998, 11231, 12718, 17327, 2015, 102]),
    ("ΟΔΟΣ σοφός", [101, 1169, 29722, 29730, 29733, 1173, 29730, 29736, 15297, 102]),
    ("ﬁne ﬂow \uff21\uff42\uff43 ½ ①", [101, 1984, 2638, 1985, 5004, 100, 1092, 100, 102]),
    ("$100 + 20% = <more> ^_^ `code` | ~tilde~", [101, 1002, 2531, 1009, 2322, 1003, 1027, 1026, 2062, 1028, 1034, 1035, 1034, 1036, 3642, 1036, 1064, 1066, 18681, 3207, 1066, 102]),
    ("def f(x): return x**2  # squares", [101, 13366, 1042, 1006, 1060, 1007, 1024, 2709, 1060, 1008, 1008, 1016, 1001, 14320, 102]),
    ("😀 emoji 🚀 rocket", [101, 100, 7861, 29147, 2072, 100, 7596, 102]),
    ("a" * 101, [101, 100, 102]),
    ("Memory 42 was superseded on 2024-03-15T10:00:00Z.", [101, 3638, 4413, 2001, 19886, 2006, 16798, 2549, 1011, 6021, 1011, 2321, 2102, 10790, 1024, 4002, 1024, 4002, 2480, 1012, 102]),
    ("It's the user's 3rd deployment's rollback", [101, 2009, 1005, 1055, 1996, 5310, 1005, 1055, 3822, 10813, 1005, 1055, 4897, 5963, 102]),
    ("\xa0non\u2003breaking\u2028spaces\u200bzero", [101, 2512, 4911, 7258, 6290, 2080, 102]),
    ("Crème brûlée, jalapeño, façade, coöperate", [101, 13675, 21382, 7987, 9307, 2063, 1010, 14855, 2721, 11837, 2080, 1010, 8508, 1010, 17654, 102]),
    ("Москва — столица России", [101, 1191, 14150, 29747, 23925, 25529, 10260, 1517, 1196, 22919, 14150, 29436, 10325, 29751, 10260, 1195, 14150, 29747, 29747, 15414, 102]),
    ("", [101, 102]),
]
# fmt: on


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer()


@pytest.mark.parametrize(("text", "ids"), GOLDEN_IDS)
def test_wordpiece_ids_match_the_reference_tokenizer(tokenizer, text, ids):
    assert tokenizer.encode(text) == ids


def test_wordpiece_splits_words_into_pieces(tokenizer):
    assert tokenizer.tokenize("Unaffable, naïve!") == [
        "una",
        "##ffa",
        "##ble",
        ",",
        "naive",
        "!",
    ]


def test_wordpiece_cuts_long_texts_to_256_ids(tokenizer):
    ids = tokenizer.encode("word " * 300)
    assert len(ids) == 256
    assert ids[0] == 101
    assert ids[-1] == 102
    assert ids[1:-1] == [2773] * 254
    assert tokenizer.encode("word " * 254) == ids


def test_wordpiece_batch_encodes_each_text(tokenizer):
    assert tokenizer.encode_batch(["hello world", ""]) == [
        [101, 7592, 2088, 102],
        [101, 102],
    ]


def test_wordpiece_cut_length_is_configurable():
    short = WordPieceTokenizer(max_tokens=5)
    assert short.encode("the user prefers dark mode") == [101, 1996, 5310, 19233, 102]


# -- MiniLM -----------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm():
    return MiniLMEmbedder()


def test_minilm_identity(minilm):
    assert minilm.name == "minilm-l6-v2-int8@1"
    assert minilm.dimensions == 384
    assert_is_embedder(minilm)


def test_minilm_rows_are_unit_float32(minilm):
    vectors = minilm.embed(["hello world", "", "Zürich 東京 😀", "word " * 400])
    assert_unit_rows(vectors, 4, 384)


def test_minilm_empty_input_has_shape_zero_by_d(minilm):
    empty = minilm.embed([])
    assert empty.shape == (0, 384)
    assert empty.dtype == np.float32


def test_minilm_is_semantic(minilm):
    query, paraphrase, unrelated = minilm.embed(
        [
            "How do I reset my password?",
            "Steps to recover a forgotten password",
            "The weather in Paris is sunny",
        ]
    )
    assert cosine(query, paraphrase) > 0.6
    assert cosine(query, unrelated) < 0.2
    assert cosine(query, paraphrase) > cosine(query, unrelated) + 0.4


def test_minilm_matches_meaning_without_shared_words(minilm):
    memories = [
        "The user prefers dark mode in every editor.",
        "Deploys to production happen on Tuesdays after review.",
        "Alice is allergic to peanuts.",
    ]
    queries = [
        "Which colour theme does the user like?",
        "When do we ship releases?",
        "What food can Alice not eat?",
    ]
    similarity = minilm.embed(queries) @ minilm.embed(memories).T
    assert list(similarity.argmax(axis=1)) == [0, 1, 2]


def test_minilm_vector_does_not_depend_on_its_batch(minilm):
    short = "hello world"
    long = "This is a considerably longer sentence with many more tokens, " * 5
    alone = minilm.embed([short])[0]
    padded = minilm.embed([long, short])[1]
    np.testing.assert_allclose(alone, padded, atol=1e-5)


def test_minilm_keeps_input_order_across_sorted_batches(minilm):
    texts = [f"note {i}: " + "detail " * (i % 7) + f"item {i}" for i in range(40)]
    together = minilm.embed(texts)
    for i in (0, 5, 33, 39):
        np.testing.assert_allclose(together[i], minilm.embed([texts[i]])[0], atol=1e-5)


def test_minilm_cuts_long_texts_at_256_tokens(minilm):
    long, cut = minilm.embed(["word " * 1000, "word " * 254])
    np.testing.assert_allclose(long, cut, atol=1e-5)


def test_minilm_reports_a_broken_model_file(tmp_path):
    broken = tmp_path / "model.onnx"
    broken.write_bytes(b"not a model")
    embedder = MiniLMEmbedder(model_path=broken)
    with pytest.raises(EmbedderError, match="could not be loaded from") as info:
        embedder.embed(["x"])
    assert str(broken) in str(info.value)
    assert str(info.value).endswith(".")
    assert "\n" not in str(info.value)


def test_minilm_rejects_bad_settings():
    with pytest.raises(EmbedderError, match="threads >= 1"):
        MiniLMEmbedder(threads=0)


def test_importing_and_configuring_loads_no_model():
    code = (
        "import sys; import ctx.hub.retrieval.embedders as e; "
        "light = 'numpy' not in sys.modules; "
        "e.make_embedder({}); "
        "print(light, 'onnxruntime' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["True", "False"]


# -- HTTP adapters ----------------------------------------------------------


def fake_vector(text):
    """Deterministic, deliberately not normalised."""
    return [float(len(text)), float(sum(c in "aeiou" for c in text)), 2.0]


class FakeServer(BaseHTTPRequestHandler):
    """Implements OpenAI's /v1/embeddings and Ollama's /api/embed."""

    requests: list  # (path, headers, body), set per server

    def log_message(self, format, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append((self.path, dict(self.headers), body))
        model = body["model"]
        if model == "fail":
            return self.answer(500, b'{"error": "model exploded."}')
        if model == "garbage":
            return self.answer(200, b"<html>not json</html>")
        vectors = [fake_vector(text) for text in body["input"]]
        if model == "short":
            vectors = vectors[:-1]
        if model == "zero":
            vectors[0] = [0.0, 0.0, 0.0]
        if self.path == "/v1/embeddings":
            items = [
                {"object": "embedding", "embedding": v, "index": i}
                for i, v in enumerate(vectors)
            ]
            # Real servers may answer out of order; "index" says which is which.
            answer = {"object": "list", "data": items[::-1], "model": model}
        elif self.path == "/api/embed":
            answer = {"model": model, "embeddings": vectors}
        else:
            return self.answer(404, b"404 page not found")
        return self.answer(200, json.dumps(answer).encode())

    def answer(self, status, payload):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def server(monkeypatch) -> Iterator[tuple[str, list]]:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    requests: list = []
    handler = type("Handler", (FakeServer,), {"requests": requests})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", requests
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def expected(texts):
    rows = np.array([fake_vector(t) for t in texts], dtype=np.float64)
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def closed_port_url():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_openai_embeds_in_input_order_and_normalises(server):
    url, requests = server
    embedder = OpenAIEmbedder(url, "text-embedding-3-small", api_key="sk-test")
    texts = ["alpha", "be", "a longer sentence"]
    vectors = embedder.embed(texts)
    assert_unit_rows(vectors, 3, 3)
    np.testing.assert_allclose(vectors, expected(texts), atol=1e-6)
    assert embedder.dimensions == 3
    assert embedder.name == "openai:text-embedding-3-small@1"
    assert_is_embedder(embedder)
    [(path, headers, body)] = requests
    assert path == "/v1/embeddings"
    assert headers["Authorization"] == "Bearer sk-test"
    assert body == {"model": "text-embedding-3-small", "input": texts}


def test_openai_accepts_a_base_url_ending_in_v1_and_asks_for_dimensions(server):
    url, requests = server
    embedder = OpenAIEmbedder(url + "/v1/", "m", dimensions=3)
    assert embedder.embed(["x"]).shape == (1, 3)
    assert embedder.name == "openai:m-3@1"
    [(path, headers, body)] = requests
    assert path == "/v1/embeddings"
    assert "Authorization" not in headers
    assert body == {"model": "m", "input": ["x"], "dimensions": 3}


def test_openai_checks_the_dimensions_it_asked_for(server):
    url, _ = server
    embedder = OpenAIEmbedder(url, "m", dimensions=8)
    with pytest.raises(EmbedderError, match="3 dimensions where 8 were expected"):
        embedder.embed(["x"])


def test_openai_sends_large_inputs_in_batches(server):
    url, requests = server
    texts = [f"text number {i}" for i in range(150)]
    vectors = OpenAIEmbedder(url, "m").embed(texts)
    np.testing.assert_allclose(vectors, expected(texts), atol=1e-6)
    assert [len(body["input"]) for _, _, body in requests] == [64, 64, 22]


def test_remote_dimensions_are_learned_by_asking_once(server):
    url, requests = server
    embedder = OllamaEmbedder(url, "nomic-embed-text")
    assert embedder.dimensions == 3
    assert embedder.dimensions == 3
    assert len(requests) == 1
    assert embedder.embed([]).shape == (0, 3)
    assert len(requests) == 1


def test_ollama_embeds(server):
    url, requests = server
    embedder = OllamaEmbedder(url + "/", "nomic-embed-text")
    texts = ["alpha", "beta gamma"]
    np.testing.assert_allclose(embedder.embed(texts), expected(texts), atol=1e-6)
    assert embedder.name == "ollama:nomic-embed-text@1"
    assert_is_embedder(embedder)
    [(path, _, body)] = requests
    assert path == "/api/embed"
    assert body == {"model": "nomic-embed-text", "input": texts}


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_remote_endpoint_down_is_a_clear_error(kind):
    url = closed_port_url()
    embedder = make_embedder({"kind": kind, "base_url": url, "model": "m"})
    with pytest.raises(EmbedderError, match="could not be reached") as info:
        embedder.embed(["x"])
    message = str(info.value)
    assert url in message
    assert message.endswith(".")
    assert "\n" not in message
    assert info.value.hint is not None
    assert "Start the embedding server" in info.value.hint


@pytest.mark.parametrize(
    ("cls", "path"),
    [(OpenAIEmbedder, "/v1/embeddings"), (OllamaEmbedder, "/api/embed")],
)
def test_remote_http_500_is_a_clear_error(server, cls, path):
    url, _ = server
    with pytest.raises(EmbedderError) as info:
        cls(url, "fail").embed(["x"])
    assert str(info.value) == (
        f'The embedding endpoint {url}{path} answered HTTP 500: {{"error": '
        f'"model exploded."}}.'
    )


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("garbage", "did not answer JSON: <html>not json</html>."),
        ("short", "answered 1 vector for 2 texts."),
        ("zero", "answered a zero or non-finite vector."),
    ],
)
@pytest.mark.parametrize("cls", [OpenAIEmbedder, OllamaEmbedder])
def test_remote_bad_answers_are_clear_errors(server, cls, model, message):
    url, _ = server
    with pytest.raises(EmbedderError) as info:
        cls(url, model).embed(["x", "y"])
    assert str(info.value).startswith(f"The embedding endpoint {url}/")
    assert str(info.value).endswith(message)


def test_remote_rejects_a_url_that_is_not_http():
    with pytest.raises(EmbedderError, match="must start with http"):
        OpenAIEmbedder("127.0.0.1:8080", "m")


# -- factory ----------------------------------------------------------------


def test_factory_defaults_to_minilm():
    assert isinstance(make_embedder({}), MiniLMEmbedder)
    assert isinstance(make_embedder({"kind": "minilm", "threads": 1}), MiniLMEmbedder)


def test_factory_threads_fill_in_where_the_config_names_none():
    # `ctx serve --workers` shares the cores out among its processes.
    assert repr(make_embedder({}, threads=1)) == "MiniLMEmbedder(threads=1)"
    assert repr(make_embedder({"threads": 3}, threads=1)) == "MiniLMEmbedder(threads=3)"
    hashing = make_embedder({"kind": "hashing"}, threads=1)
    assert hashing.name == "hashing-384@1"


def test_factory_builds_each_kind():
    hashing = make_embedder({"kind": "hashing", "dimensions": 64})
    assert hashing.name == "hashing-64@1"
    openai = make_embedder(
        {
            "kind": "openai",
            "base_url": "http://127.0.0.1:9",
            "model": "text-embedding-3-small",
            "api_key_env": "MY_KEY",
            "timeout": 5,
        },
        environ={"MY_KEY": "sk-1"},
    )
    assert isinstance(openai, OpenAIEmbedder)
    ollama = make_embedder({"kind": "ollama", "model": "nomic-embed-text"})
    assert isinstance(ollama, OllamaEmbedder)
    assert ollama.name == "ollama:nomic-embed-text@1"
    assert EMBEDDER_KINDS == ("e5", "hashing", "minilm", "ollama", "openai")


def test_factory_sends_the_key_from_the_environment(server):
    url, requests = server
    embedder = make_embedder(
        {"kind": "openai", "base_url": url, "model": "m", "api_key_env": "KEY"},
        environ={"KEY": "sk-env"},
    )
    embedder.embed(["x"])
    assert requests[0][1]["Authorization"] == "Bearer sk-env"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"kind": "word2vec"}, "There is no embedder of kind 'word2vec'."),
        ({"kind": 3}, "There is no embedder of kind 3."),
        (
            {"kind": "hashing", "dimension": 64},
            'The "hashing" embedder has no option "dimension".',
        ),
        (
            {"kind": "openai", "base_url": "http://x"},
            'The "openai" embedder needs "model" in its config.',
        ),
        (
            {"kind": "hashing", "dimensions": "64"},
            'The "hashing" embedder\'s "dimensions" must be a positive whole number, not \'64\'.',
        ),
        (
            {
                "kind": "openai",
                "base_url": "http://x",
                "model": "m",
                "api_key_env": "NOPE",
            },
            "The environment variable NOPE holds no API key.",
        ),
    ],
)
def test_factory_rejects_bad_configs(config, message):
    with pytest.raises(EmbedderError) as info:
        make_embedder(config, environ={})
    assert str(info.value) == message


def test_factory_hints_at_the_known_kinds():
    with pytest.raises(EmbedderError) as info:
        make_embedder({"kind": "nope"})
    assert info.value.hint == "Choose one of: e5, hashing, minilm, ollama, openai."


def test_factory_results_are_embedders():
    for kind in EMBEDDER_KINDS:
        config = {"kind": kind, "base_url": "http://127.0.0.1:9", "model": "m"}
        if kind in ("e5", "hashing", "minilm"):
            config = {"kind": kind}
        embedder: Embedder = make_embedder(config)
        assert_is_embedder(embedder)


def test_the_package_exports_a_sorted_public_surface():
    names = embedders.__all__
    assert names == sorted(
        names, key=lambda n: (not n.isupper(), not n[0].isupper(), n)
    )
    for name in names:
        value = getattr(embedders, name)
        assert getattr(value, "__module__", "ctx.hub.retrieval.embedders").startswith(
            ("ctx.hub.retrieval.embedders", "builtins")
        ), name
    with pytest.raises(AttributeError, match="no_such_name"):
        embedders.no_such_name  # noqa: B018


def test_embedder_error_is_a_ctx_error():
    assert issubclass(EmbedderError, CtxError)
    assert EmbedderError("x.").exit_code == 1


def test_an_embedding_writes_nothing_in_home(tmp_path):
    # onnxruntime writes ~/.cache/Microsoft/DeveloperTools/.onnxruntime/deviceid
    # when it loads, unless told not to (issue 35): a fresh process, a fresh HOME.
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("XDG_", "ORT_"))
    }
    env["HOME"] = str(home)
    code = (
        "import sys; from ctx.hub.retrieval.embedders.minilm import MiniLMEmbedder; "
        "print(MiniLMEmbedder().embed(['one memory']).shape); "
        "print('onnxruntime' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=project,
    )
    assert out.stdout.split() == ["(1,", "384)", "True"]
    assert sorted(p.relative_to(home) for p in home.rglob("*")) == []
