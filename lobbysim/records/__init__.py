"""What a run writes: the rows of seats and games (:mod:`~lobbysim.records.rows`), the record files
as CSV or Parquet (:mod:`~lobbysim.records.files`), their writer beside a running lobby
(:mod:`~lobbysim.records.writer`) and reader (:mod:`~lobbysim.records.reader`), and output
folders and files written atomically, never over what is there (:mod:`~lobbysim.records.outputs`).
"""
