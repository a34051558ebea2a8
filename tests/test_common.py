"""scikit-learn's common estimator checks, with no skips (the array-API
check runs where SciPy's array-API mode is on: see ``_array_api``)."""

from _array_api import run_check
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_clda import CompoundLDA, LDAGibbs


@parametrize_with_checks(
    [
        LDAGibbs(n_components=3, max_iter=20, random_state=0),
        CompoundLDA(n_components=3, max_iter=20, random_state=0),
        CompoundLDA(n_components=3, algorithm="mgs", max_iter=20, random_state=0),
        CompoundLDA(n_components=3, algorithm="vem", max_iter=20, random_state=0),
        LDAGibbs(n_components=3, max_iter=20, learn_priors=True, random_state=0),
    ]
)
def test_sklearn_compatible_estimator(estimator, check, request):
    run_check(request, estimator, check)
