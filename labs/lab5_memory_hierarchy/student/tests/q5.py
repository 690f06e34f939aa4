OK_FORMAT = True

test = {   'name': 'q5',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import measurements, memory\n'
                                               '>>> from gpuperf.grading import answered, check_close\n'
                                               ">>> _t0 = measurements.find('CPU ↔ GPU round-trip latency', 'H100-SXM').value\n"
                                               ">>> _W = measurements.find('CPU → GPU copy', 'H100-SXM').value\n"
                                               ">>> check_close('half_bandwidth_bytes', half_bandwidth_bytes, memory.half_bandwidth_size(_W, _t0), unit='B', hints={1 / _W ** 2: 'n½ = t0 · W, not t0 "
                                               "/ W'})\n"
                                               ">>> for _name in ['n_90', 'batching_speedup', 'local_copy_max_latency_s']:\n"
                                               '...     _ = answered(_name, globals().get(_name, ...))\n',
                                       'hidden': False,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
