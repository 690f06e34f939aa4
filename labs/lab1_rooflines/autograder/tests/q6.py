OK_FORMAT = True

test = {   'name': 'q6',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import chip, parallelism\n'
                                               '>>> from gpuperf.grading import answered, check_close\n'
                                               ">>> _implied_hz = parallelism.peak_decomposition('H100-SXM', 'bf16').implied_clock_hz\n"
                                               ">>> check_close('tensor_clock_hz', tensor_clock_hz, _implied_hz, unit='Hz', hints={chip('H100-SXM').boost_clock_hz / _implied_hz: 'that is the boost "
                                               "clock, but the bf16 peak assumes a lower clock: the clock it implies is peak / (SMs × FLOP per clock per SM)'})\n"
                                               ">>> for _name in ['bytes_in_flight_per_sm', 'warps_needed', 'min_loads_in_flight']:\n"
                                               '...     _ = answered(_name, globals().get(_name, ...))\n',
                                       'hidden': False,
                                       'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q6', globals())\n", 'hidden': True, 'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
