"""The Kafka event trigger: the function served from Kafka topics instead of HTTP.

Each record is turned into a WSGI request (:mod:`.records`), dispatched through
the same application and layers as an HTTP call (:mod:`.dispatch`), and its
offset committed only once the function succeeded (:mod:`.consumer`). The
``kafka`` server adapter runs it; ``confluent-kafka`` comes with the
``funcwsgi[kafka]`` extra and is imported only by :mod:`.client`.
"""
