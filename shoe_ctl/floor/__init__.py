"""The floor: each table publishes its journal and public state to the room's MQTT broker, and
``shoe-ctl floor`` follows every table on one page (``docs/floor.md``).

- :mod:`shoe_ctl.floor.publisher` — :func:`~shoe_ctl.floor.publisher.attach_floor` and the table's
  sink :class:`~shoe_ctl.floor.publisher.FloorPublisher` (the journal is the outbox);
- :mod:`shoe_ctl.floor.consumer` — the floor's view, each event once and in order;
- :mod:`shoe_ctl.floor.page` — the floor page (aiohttp);
- :mod:`shoe_ctl.floor.topics` — topics and payloads under the hole-card embargo;
- :mod:`shoe_ctl.floor.failover` — two brokers: the floor's online state, a table's choice of broker;
- :mod:`shoe_ctl.floor.central` — each property's floor replicated to a central NATS JetStream;
- :mod:`shoe_ctl.floor.config` — ``[floor]`` and the credentials file;
- :mod:`shoe_ctl.floor.cli` — ``register`` (``shoe-ctl floor``);
- :mod:`shoe_ctl.floor.broker`, :mod:`~hil.floor_rig`, :mod:`~hil.floor` — a Mosquitto,
  virtual tables and a cuttable network for the tests and ``shoe-ctl hil floor``.

paho-mqtt is imported only by the modules that talk to the broker.
"""
