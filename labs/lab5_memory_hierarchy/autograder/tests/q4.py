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
                                       'locked': False},
                                   {   'code': '>>> from gpuperf import measurements, memory\n'
                                               '>>> from gpuperf.grading import check_close\n'
                                               ">>> t0 = measurements.find('CPU ↔ GPU round-trip latency', 'H100-SXM').value\n"
                                               ">>> W = measurements.find('CPU → GPU copy', 'H100-SXM').value\n"
                                               ">>> check_close('n_90', n_90, 9 * memory.half_bandwidth_size(W, t0), unit='B', hints={1 / 9: 'solve n / (t0 + n/W) = 0.9 W for n'})\n"
                                               ">>> check_close('batching_speedup', batching_speedup, 1000 * memory.transfer_time(4096, W, t0) / memory.transfer_time(4096000, W, t0))\n"
                                               ">>> check_close('implied_latency_s', implied_latency_s, measurements.LATENCY_BOUND_BELOW_BYTES / W, unit='s')\n",
                                       'hidden': True,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
