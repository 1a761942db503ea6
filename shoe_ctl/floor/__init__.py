"""The floor: each table publishes its journal and public state to the room's MQTT broker (or two
brokers with failover, replicated to a central NATS JetStream), and ``shoe-ctl floor`` follows
every table on one page. The publisher (:mod:`.publisher`, the journal is the outbox), the
floor's view (:mod:`.consumer`), the page (:mod:`.page`), the topics under the hole-card embargo
(:mod:`.topics`), failover (:mod:`.failover`), the central stream (:mod:`.central`), ``[floor]``
(:mod:`.config`) and the CLI (:mod:`.cli`); paho-mqtt is imported only by the modules that talk
to the broker. The whole: docs/floor.md; its modules: docs/architecture.md."""
