"""The router's agents: its catalog (ChainRec's tools plus the method tools of
agents/router/method_tools/) and its rule planner."""
