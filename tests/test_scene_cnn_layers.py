"""A lower layer of the shared CNN as region features (issue 31's candidate stand-in): the pruned graph gives the full
network's tensor, regions are the means of their own cells, the cache is keyed on the settings and never changes
a result."""
import numpy as np
import pytest

from lvmrepro.tasks.scenes import cnn, cnn_layers, features
from lvmrepro.tasks.scenes import data as scene15

from conftest import needs_data

FEATURE = "cnn-block4"


def _pool_reference(fmap, grid=10):
    """Plain loops: region (a, b) is the mean of its (h / grid) x (w / grid) cells."""
    C, h, w = fmap.shape
    kh, kw = h // grid, w // grid
    out = np.zeros((grid * grid, C))
    for a in range(grid):
        for b in range(grid):
            for c in range(C):
                out[a * grid + b, c] = np.mean(fmap[c, a * kh:(a + 1) * kh, b * kw:(b + 1) * kw], dtype=np.float64)
    return out


def test_pool_regions_matches_loops():
    rng = np.random.default_rng(0)
    for shape in [(3, 40, 40), (5, 20, 30), (2, 10, 10)]:
        fmap = rng.normal(size=shape).astype(np.float32)
        got = cnn_layers.pool_regions(fmap)
        assert got.shape == (100, shape[0]) and got.dtype == np.float32
        np.testing.assert_allclose(got, _pool_reference(fmap), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="multiples of 10"):
        cnn_layers.pool_regions(np.zeros((3, 15, 20)))
    with pytest.raises(ValueError, match=r"\(C, h, w\)"):
        cnn_layers.pool_regions(np.zeros((20, 20)))


def test_bad_feature_and_batch_are_refused_before_any_work():
    with pytest.raises(ValueError, match="unknown CNN layer feature"):
        cnn_layers.feature_dim("cnn-block99")
    with pytest.raises(ValueError, match="unknown CNN layer feature"):
        cnn_layers.layer_maps(np.zeros((1, 3, 32, 32), np.float32), "hog")
    with pytest.raises(ValueError, match="multiples of 32"):
        cnn_layers.layer_maps(np.zeros((1, 3, 30, 32), np.float32), FEATURE)
    with pytest.raises(ValueError, match="region features must be one of"):
        features.load_scene_data(8, classes=("Coast", "Forest"), per_class=2, features="cnn-block99")


@needs_data
def test_pruned_graph_gives_the_full_networks_tensor():
    import onnx
    import onnxruntime as ort
    from lvmrepro.datasets.registry import fetch
    tensor, channels, stride = cnn_layers.LAYERS[FEATURE]
    full = onnx.load(str(fetch(cnn.FEATURE_GRAPH)))
    full.graph.output.append(onnx.helper.make_tensor_value_info(tensor, onnx.TensorProto.FLOAT, None))
    sess = ort.InferenceSession(full.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(1).uniform(-1, 1, size=(2, 3, 64, 96)).astype(np.float32)
    want = sess.run([tensor], {"image": x})[0]
    got = cnn_layers.layer_maps(x, FEATURE, threads=1)
    assert got.shape == (2, channels, 64 // stride, 96 // stride)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    pruned = onnx.load_from_string(cnn_layers.layer_graph(tensor))
    assert [o.name for o in pruned.graph.output] == [tensor] and len(pruned.graph.node) < len(full.graph.node)
    with pytest.raises(ValueError, match="no tensor"):
        cnn_layers.layer_graph("/no/such/tensor")


@needs_data
def test_region_features_shape_determinism_and_cache():
    images = scene15.list_images("train", ["Coast"])[:3]
    first = cnn_layers.region_features(images, FEATURE)
    assert first.shape == (3, 100, 40) and first.dtype == np.float32 and np.all(np.isfinite(first))
    # one image alone, one thread: the same numbers as the batch of three
    direct = cnn_layers.regions_of(scene15.load_image(images[1]), FEATURE, threads=1)
    assert np.array_equal(direct, first[1])
    fmap = cnn_layers.layer_maps(cnn.to_network_input(scene15.load_image(images[2]), cnn.INPUT_SIZE)[None], FEATURE)[0]
    assert fmap.shape == (40, 40, 40)
    np.testing.assert_allclose(first[2], _pool_reference(fmap), rtol=1e-6, atol=1e-6)
    again = cnn_layers.region_features(images, FEATURE)
    assert np.array_equal(again, first)
    # a damaged cache entry is recomputed, not trusted
    path = cnn_layers.feature_cache_dir(FEATURE) / images[0].sha256[:2] / f"{images[0].sha256}.npy"
    assert path.is_file()
    path.write_bytes(b"garbage")
    assert np.array_equal(cnn_layers.region_features(images, FEATURE), first)


def test_cache_is_keyed_on_the_layer(monkeypatch):
    d0 = cnn_layers.feature_cache_dir(FEATURE)
    monkeypatch.setitem(cnn_layers.LAYERS, FEATURE, ("/_blocks.2/Add_output_0", 24, 4))
    assert cnn_layers.feature_cache_dir(FEATURE) != d0
    assert d0.parent.name == "cnn-layer-regions" and d0 != cnn.feature_cache_dir()


@needs_data
def test_load_scene_data_on_the_lower_layer():
    kw = dict(classes=("Bedroom", "Coast"), per_class=2, features=FEATURE)
    data = features.load_scene_data(8, **kw)
    assert data.X_train.shape == (4, 10, 10, 8) and data.X_test.shape == (4, 10, 10, 8)
    assert data.pca.mean.shape == (40,)
    again = features.load_scene_data(8, **kw)
    assert again.info["from_cache"] and np.array_equal(again.X_train, data.X_train)
    # not the last layer's cached PCA
    cnn_data = features.load_scene_data(8, classes=("Bedroom", "Coast"), per_class=2)
    assert cnn_data.pca.mean.shape == (1280,)


def _tiny_graph():
    """x (2, 3) -> a = Relu(x) -> b = a + x -> c = b * W (an output); a side branch d = Neg(x) (another output)
    that b does not depend on; W an initialiser."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    W = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    nodes = [helper.make_node("Neg", ["x"], ["d"], name="side"),
             helper.make_node("Relu", ["x"], ["a"], name="relu"),
             helper.make_node("Add", ["a", "x"], ["b"], name="add"),
             helper.make_node("Mul", ["b", "W"], ["c"], name="mul")]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT, [2, 3]),
                               helper.make_tensor_value_info("d", TensorProto.FLOAT, [2, 3])],
                              initializer=[numpy_helper.from_array(W, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model, W


def test_prune_to_tensor_on_a_tiny_graph_matches_numpy():
    import onnxruntime as ort
    model, W = _tiny_graph()
    before = model.SerializeToString()
    x = np.array([[-1.0, 0.5, 2.0], [3.0, -0.25, 0.0]], dtype=np.float32)
    reference = {"a": np.maximum(x, 0), "b": np.maximum(x, 0) + x, "c": (np.maximum(x, 0) + x) * W, "d": -x}
    kept = {"a": ["relu"], "b": ["relu", "add"], "c": ["relu", "add", "mul"], "d": ["side"]}
    for tensor, names in kept.items():
        pruned = cnn_layers.prune_to_tensor(model, tensor)
        assert [n.name for n in pruned.graph.node] == names
        assert [o.name for o in pruned.graph.output] == [tensor]
        sess = ort.InferenceSession(pruned.SerializeToString(), providers=["CPUExecutionProvider"])
        (got,) = sess.run(None, {"x": x})
        np.testing.assert_array_equal(got, reference[tensor])
    assert model.SerializeToString() == before            # the input model is not changed
    for missing in ("x", "W", "/no/such/tensor"):         # graph inputs and initialisers are not node outputs
        with pytest.raises(ValueError, match="no tensor"):
            cnn_layers.prune_to_tensor(model, missing)


def _fake_registry(sha):
    class Entry:
        sha256 = sha

    class Registry:
        def entry(self, name):
            return Entry()
    return lambda: Registry()


def test_layer_cache_key_follows_graph_tensor_pooling_input_and_preprocessing(monkeypatch):
    from lvmrepro.datasets import registry
    d0 = cnn_layers.feature_cache_dir(FEATURE)
    assert cnn_layers.feature_cache_dir(FEATURE) == d0                         # deterministic
    changes = [
        lambda m: m.setattr(registry, "default_registry", _fake_registry("0" * 64)),
        lambda m: m.setitem(cnn_layers.LAYERS, FEATURE, ("/_blocks.4/Add_output_0", 40, 16)),
        lambda m: m.setattr(cnn_layers, "POOLING", {**cnn_layers.POOLING, "version": 2}),
        lambda m: m.setattr(cnn_layers, "INPUT_SIZE", 2 * cnn_layers.INPUT_SIZE),
        lambda m: m.setattr(cnn_layers, "GRID", 5),
        lambda m: m.setattr(cnn, "PREPROCESS", {**cnn.PREPROCESS, "version": 2}),
    ]
    seen = {d0}
    for change in changes:
        with pytest.MonkeyPatch.context() as m:
            change(m)
            d = cnn_layers.feature_cache_dir(FEATURE)
        assert d.parent == d0.parent and d not in seen
        seen.add(d)
    assert cnn_layers.feature_cache_dir(FEATURE) == d0
    with pytest.raises(ValueError, match="unknown CNN layer feature"):
        cnn_layers.feature_cache_dir("cnn")


def test_pca_cache_is_keyed_on_the_features_and_the_layer(monkeypatch):
    class Image:
        def __init__(self, sha):
            self.sha256 = sha
    train, test = [Image("a" * 64), Image("b" * 64)], [Image("c" * 64)]
    dirs = {f: features._cache_dir(train, test, 8, f) for f in features.FEATURES}
    assert len(set(dirs.values())) == len(features.FEATURES)
    assert features._cache_dir(train, test, 8, FEATURE) == dirs[FEATURE]
    assert features._cache_dir(train, [Image("d" * 64)], 8, FEATURE) != dirs[FEATURE]   # another evaluation split
    monkeypatch.setitem(cnn_layers.LAYERS, FEATURE, ("/_blocks.2/Add_output_0", 24, 4))
    assert features._cache_dir(train, test, 8, FEATURE) != dirs[FEATURE]
    with pytest.raises(ValueError, match="region features must be one of"):
        features._cache_dir(train, test, 8, "cnn-block99")
