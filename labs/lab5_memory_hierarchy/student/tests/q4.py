OK_FORMAT = True

test = {   'name': 'q4',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import measurements, memory\n'
                                               '>>> from gpuperf.grading import check_close\n'
                                               ">>> t0 = measurements.find('CPU ↔ GPU round-trip latency', 'H100-SXM').value\n"
                                               ">>> W = measurements.find('CPU → GPU copy', 'H100-SXM').value\n"
                                               ">>> check_close('half_bandwidth_bytes', half_bandwidth_bytes, memory.half_bandwidth_size(W, t0), unit='B', hints={1 / W ** 2: 'n½ = t0 · W, not t0 / "
                                               "W'})\n",
                                       'hidden': False,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
