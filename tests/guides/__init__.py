"""One test module per Volcano user guide (upstream ``docs/user-guide/<guide>.md``), named
``test_<guide>.py``: each builds the guide's scenario from the project's own fixtures
(``guide_sim`` for ``volcano-py simulate`` on objects made in the test, or
``volcano_py.testing.Cluster`` for one session) and asserts what Volcano does there. Where
Volcano contradicts its guide, the test asserts Volcano's behaviour and
docs/migrating-from-volcano.md ("Where Volcano's guides and Volcano disagree") says why.

Guides without a module here, and why:

* how_to_use_network_topology_aware_scheduling's sub-group partition example (3.3.2): sub-group
  topology (being built); the rest of that guide is covered;
* how_to_install_standalone_hypernode_controller, how_to_tune_volcano_performance,
  version-compatibility-archive: installation, tuning and release notes, no scheduling
  behaviour to assert (speed is measured in bench/).
"""
