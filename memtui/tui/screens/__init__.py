"""The console's screens: the overview, one full screen per pane, and the further screens."""
