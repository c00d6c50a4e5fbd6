"""Dataset layer: source DB reading, validation, building, admission.

One job per module: ``validation`` (pure row/template checks), ``loader`` (read a source DB),
``rows`` (read builder input), ``builder`` (write a source DB), ``info`` (Table 1 summary),
``hashes`` (hash-chain links), ``admission`` (Eq. pred-set), ``demo`` (the packaged demo set).
"""
