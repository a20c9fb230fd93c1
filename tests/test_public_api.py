import ctx.engine


def test_engine_exports_are_sorted_and_real():
    names = ctx.engine.__all__
    assert names == sorted(
        names, key=lambda n: (not n.isupper(), not n[0].isupper(), n)
    )
    for name in names:
        assert getattr(ctx.engine, name) is not None
    public = {n for n in dir(ctx.engine) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(ctx.engine, n)).__name__ == "module"}
    assert public - modules == set(names)
