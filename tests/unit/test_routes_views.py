"""The turn routers' views mirror TurnState: same annotation, same default, for every field."""

from graph.routes import DraftsView, LambdaView, ModeView, ToolView
from state.turn import TurnState


def test_route_views_read_as_the_whole_state_would() -> None:
    fresh = TurnState(user_text="hello")
    for view in (ModeView, DraftsView, LambdaView, ToolView):
        for name, info in view.model_fields.items():
            assert info.annotation == TurnState.model_fields[name].annotation, (view, name)
            assert info.get_default(call_default_factory=True) == getattr(fresh, name), name
