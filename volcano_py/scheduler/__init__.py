"""The scheduling loop: snapshot, open session, run the actions, close the session."""
