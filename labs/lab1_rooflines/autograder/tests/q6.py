OK_FORMAT = True

test = {   'name': 'q6',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import parallelism\n'
                                               '>>> from gpuperf.grading import answered, check_close\n'
                                               ">>> check_close('tensor_clock_hz', tensor_clock_hz, parallelism.peak_decomposition('H100-SXM', 'bf16').implied_clock_hz, unit='Hz', hints={1.0824: "
                                               "'divide the peak by SMs × FLOP per clock per SM, not by the boost clock: the peak assumes a lower clock'})\n"
                                               ">>> for _name in ['bytes_in_flight_per_sm', 'warps_needed', 'min_loads_in_flight']:\n"
                                               '...     _ = answered(_name, globals().get(_name, ...))\n',
                                       'hidden': False,
                                       'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q6', globals())\n", 'hidden': True, 'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
